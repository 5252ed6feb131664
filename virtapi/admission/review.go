package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

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

// Validate answers a validating AdmissionRequest within the operator's limits.
func Validate(req *admissionv1.AdmissionRequest, limits Limits) *admissionv1.AdmissionResponse {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(req)
	}
	var errs field.ErrorList
	var warnings []string
	raw := req.Object.Raw
	switch req.Resource.Resource {
	case VirtualMachines:
		vm := &v1.VirtualMachine{}
		if err := decode(req, raw, vm); err != nil {
			return denied(req, err)
		}
		errs, warnings = ValidateVM(vm, raw, limits)
	case VirtualMachineInstances:
		vmi := &v1.VirtualMachineInstance{}
		if err := decode(req, raw, vmi); err != nil {
			return denied(req, err)
		}
		old, err := oldInstance(req)
		switch {
		case err != nil:
			return denied(req, err)
		case old != nil:
			// The spec was checked when the instance was created; only its change is refused.
			errs = ValidateVMIUpdate(old, vmi)
		default:
			errs = ValidateVMI(vmi, raw, limits)
		}
	case ReplicaSets:
		rs := &v1.VirtualMachineInstanceReplicaSet{}
		if err := decode(req, raw, rs); err != nil {
			return denied(req, err)
		}
		errs = ValidateVMIRS(rs, raw, limits)
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
		if err := decode(req, raw, vm); err != nil {
			return denied(req, err)
		}
		ops = DefaultVM(vm, req.Operation == admissionv1.Create)
	case VirtualMachineInstances:
		vmi := &v1.VirtualMachineInstance{}
		if err := decode(req, raw, vmi); err != nil {
			return denied(req, err)
		}
		old, err := oldInstance(req)
		if err != nil {
			return denied(req, err)
		}
		// An update whose spec means what the stored one does gets no defaults: they would
		// make it differ (if the stored spec predates a default) and be refused as a change.
		if old == nil || !sameSpec(&old.Spec, &vmi.Spec) {
			ops = DefaultVMI(vmi)
		}
	case ReplicaSets:
		rs := &v1.VirtualMachineInstanceReplicaSet{}
		if err := decode(req, raw, rs); err != nil {
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

// decode reads the object. A value of the wrong type (a negative spec.domain.cpu.cores, which
// the CRD's integer schema lets through to the webhooks) is a 422 naming the field; other
// bodies the types cannot hold are a 400 naming the problem.
func decode(req *admissionv1.AdmissionRequest, raw []byte, into any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return apierrors.NewBadRequest("the admission request carries no object")
	}
	err := json.Unmarshal(raw, into)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" && typeErr.Type != nil {
		// encoding/json names the field without list indexes (spec.volumes.name).
		gk := schema.GroupKind{Group: v1.GroupName, Kind: kinds[req.Resource.Resource]}
		return apierrors.NewInvalid(gk, req.Name, field.ErrorList{
			field.Invalid(field.NewPath(typeErr.Field), typeErr.Value, "must be "+jsonType(typeErr.Type))})
	}
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("cannot decode the object: %v", err))
	}
	return nil
}

// jsonType says what JSON value t holds, for a user who never saw the Go types.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<t.Bits()-1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("an integer from %d to %d", -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1)
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "of type " + t.String()
}

// oldInstance is the stored instance of an update, nil for a create (or an update without
// one, which the apiserver never sends).
func oldInstance(req *admissionv1.AdmissionRequest) (*v1.VirtualMachineInstance, error) {
	if req.Operation != admissionv1.Update || len(bytes.TrimSpace(req.OldObject.Raw)) == 0 {
		return nil, nil
	}
	old := &v1.VirtualMachineInstance{}
	if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
		// Not the user's doing: say so rather than name a field they did not send.
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the stored instance: %v", err))
	}
	return old, nil
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
