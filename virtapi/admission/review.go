package admission

import (
	"bytes"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Resources the webhooks serve, by the resource name the AdmissionRequest carries.
const (
	VirtualMachines         = "virtualmachines"
	VirtualMachineInstances = "virtualmachineinstances"
	ReplicaSets             = "virtualmachineinstancereplicasets"
)

var kinds = map[string]string{
	VirtualMachines:         "VirtualMachine",
	VirtualMachineInstances: "VirtualMachineInstance",
	ReplicaSets:             "VirtualMachineInstanceReplicaSet",
}

// Validate answers a validating AdmissionRequest.
func Validate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(req)
	}
	var errs field.ErrorList
	var warnings []string
	raw := req.Object.Raw
	switch req.Resource.Resource {
	case VirtualMachines:
		vm := &v1.VirtualMachine{}
		if err := decode(raw, vm); err != nil {
			return denied(req, err)
		}
		errs, warnings = ValidateVM(vm, raw)
	case VirtualMachineInstances:
		vmi := &v1.VirtualMachineInstance{}
		if err := decode(raw, vmi); err != nil {
			return denied(req, err)
		}
		errs = ValidateVMI(vmi, raw)
	case ReplicaSets:
		rs := &v1.VirtualMachineInstanceReplicaSet{}
		if err := decode(raw, rs); err != nil {
			return denied(req, err)
		}
		errs = ValidateVMIRS(rs, raw)
	default:
		return allowed(req) // not ours: never block what we do not understand
	}
	if len(errs) > 0 {
		gk := schema.GroupKind{Group: v1.GroupName, Kind: kinds[req.Resource.Resource]}
		resp := denied(req, apierrors.NewInvalid(gk, req.Name, errs))
		resp.Warnings = warnings
		return resp
	}
	resp := allowed(req)
	resp.Warnings = warnings
	return resp
}

// Mutate answers a mutating AdmissionRequest with a JSON patch of the defaults.
func Mutate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(req)
	}
	var ops []PatchOp
	raw := req.Object.Raw
	switch req.Resource.Resource {
	case VirtualMachines:
		vm := &v1.VirtualMachine{}
		if err := decode(raw, vm); err != nil {
			return denied(req, err)
		}
		ops = DefaultVM(vm, req.Operation == admissionv1.Create)
	case VirtualMachineInstances:
		vmi := &v1.VirtualMachineInstance{}
		if err := decode(raw, vmi); err != nil {
			return denied(req, err)
		}
		ops = DefaultVMI(vmi)
	case ReplicaSets:
		rs := &v1.VirtualMachineInstanceReplicaSet{}
		if err := decode(raw, rs); err != nil {
			return denied(req, err)
		}
		ops = DefaultVMIRS(rs)
	default:
		return allowed(req)
	}
	patch, err := marshalPatch(ops)
	if err != nil {
		return denied(req, apierrors.NewInternalError(err))
	}
	resp := allowed(req)
	if patch != nil {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = patch, &pt
	}
	return resp
}

// decode reads the object; a body the types cannot hold is a 400 naming the problem.
func decode(raw []byte, into any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return apierrors.NewBadRequest("the admission request carries no object")
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("cannot decode the object: %v", err))
	}
	return nil
}

func allowed(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
}

func denied(req *admissionv1.AdmissionRequest, err error) *admissionv1.AdmissionResponse {
	status := metav1.Status{Status: metav1.StatusFailure, Message: err.Error(), Code: 400}
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s.Status()
	}
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: false, Result: &status}
}
