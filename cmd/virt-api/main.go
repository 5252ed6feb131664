// Command virt-api serves the start/stop/restart/console subresources and the admission webhooks.
//
// Until issue 7 lands it only serves /healthz and /readyz, so that it deploys and its pod
// becomes Ready; it does no other work.
package main

import "github.com/vmctl/vmctl/pkg/component"

func main() { component.ServeHealthOnly("virt-api", 7) }
