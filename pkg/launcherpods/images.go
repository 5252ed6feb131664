package launcherpods

import corev1 "k8s.io/api/core/v1"

// Why a container waits on its image, as the kubelet says it.
const (
	ReasonErrImagePull     = "ErrImagePull"
	ReasonImagePullBackOff = "ImagePullBackOff"
)

// WaitingOnImage is the first of the pod's containers, init containers first, that waits
// because its image cannot be pulled (a containerDisk or kernelBoot image), nil when none does.
func WaitingOnImage(pod *corev1.Pod) *corev1.ContainerStatus {
	if pod == nil {
		return nil
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range statuses {
			if w := statuses[i].State.Waiting; w != nil && (w.Reason == ReasonErrImagePull || w.Reason == ReasonImagePullBackOff) {
				return &statuses[i]
			}
		}
	}
	return nil
}
