// Command coredns is CoreDNS with the plugins a cluster's DNS needs and nothing else. The
// stock binary links every plugin (cloud providers' DNS APIs among them), which would
// download and build several hundred modules for features the local cluster never uses;
// CoreDNS documents this way of choosing plugins: a main that imports coremain and the
// plugins, whose directive order stays the one CoreDNS generates (dnsserver.Directives).
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
