package handlerapi

// Query is a read of what the guest agent of an instance reports, which virt-api forwards to
// the handler of the instance's node: a plain GET on the stream server, answered 200 with
// KubeVirt's JSON (VirtualMachineInstanceGuestAgentInfo, ...GuestOSUserList,
// ...FileSystemList), or with the refusal's status and a text/plain reason. The names are
// KubeVirt's subresources.
type Query string

const (
	GuestOSInfo    Query = "guestosinfo"
	UserList       Query = "userlist"
	FileSystemList Query = "filesystemlist"
)

// Queries are the guest agent queries a handler serves.
var Queries = []Query{GuestOSInfo, UserList, FileSystemList}

// QueryPath is the path of q on namespace/name on a handler.
func QueryPath(namespace, name string, q Query) string {
	return instancePath(namespace, name, string(q))
}

// QueryPattern is QueryPath as an http.ServeMux pattern.
func QueryPattern(q Query) string { return instancePattern("GET", string(q)) }
