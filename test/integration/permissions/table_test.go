package permissions

import (
	"bufio"
	"fmt"
	authorizationv1 "k8s.io/api/authorization/v1"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/vmctl/vmctl/test/apiserver"
)

// account is one service account's section of manifests/PERMISSIONS.md.
type account struct {
	namespace, name string
	allowed, denied []row
}

// row is one line of a table: a resource, its verbs, where, and on which objects.
type row struct {
	group, resource, subresource string
	verbs                        []string
	namespace                    string // "" for cluster
	names                        []string
}

// String is the resource as the table writes it.
func (r row) String() string {
	res := r.resource
	if r.group != "" {
		res += "." + r.group
	}
	if r.subresource != "" {
		res += "/" + r.subresource
	}
	return res
}

// attributes are what a SubjectAccessReview asks about verb on the row's resource in
// namespace (all namespaces when empty), on the object name (any when empty).
func (r row) attributes(namespace, verb, name string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: r.group,
		Resource: r.resource, Subresource: r.subresource, Name: name}
}

var accountLine = regexp.MustCompile("^Service account `([a-z0-9-]+)/([a-z0-9-]+)`")

// readTable parses manifests/PERMISSIONS.md: after each "Service account `ns/name`" line, the
// table headed "| resource |" holds the allowed rows, "| denied resource |" the denied ones.
func readTable() ([]*account, error) {
	root, err := apiserver.RepoRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, "manifests", "PERMISSIONS.md"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var accounts []*account
	var into *[]row
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if m := accountLine.FindStringSubmatch(line); m != nil {
			accounts = append(accounts, &account{namespace: m[1], name: m[2]})
			continue
		}
		if !strings.HasPrefix(line, "|") {
			into = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case strings.HasPrefix(cells[0], "---"):
		case len(accounts) == 0:
			return nil, fmt.Errorf("PERMISSIONS.md:%d: a table before any service account", n)
		case cells[0] == "resource":
			into = &accounts[len(accounts)-1].allowed
		case cells[0] == "denied resource":
			into = &accounts[len(accounts)-1].denied
		case into == nil:
			return nil, fmt.Errorf("PERMISSIONS.md:%d: a row without a known header", n)
		default:
			r, err := parseRow(cells, into == &accounts[len(accounts)-1].allowed)
			if err != nil {
				return nil, fmt.Errorf("PERMISSIONS.md:%d: %w", n, err)
			}
			*into = append(*into, r)
		}
	}
	return accounts, scanner.Err()
}

// parseRow reads resource, verbs, scope and (allowed rows only) names.
func parseRow(cells []string, allowed bool) (row, error) {
	if (allowed && len(cells) != 5) || (!allowed && len(cells) != 4) {
		return row{}, fmt.Errorf("%d columns", len(cells))
	}
	var r row
	resource, sub, _ := strings.Cut(cells[0], "/")
	r.resource, r.group, _ = strings.Cut(resource, ".")
	r.subresource = sub
	r.verbs = list(cells[1])
	switch scope := cells[2]; {
	case scope == "cluster":
	case strings.HasPrefix(scope, "namespace "):
		r.namespace = strings.TrimPrefix(scope, "namespace ")
	default:
		return row{}, fmt.Errorf("scope %q: want cluster or namespace <name>", scope)
	}
	if allowed {
		r.names = list(cells[3])
	}
	if r.resource == "" || len(r.verbs) == 0 {
		return row{}, fmt.Errorf("no resource or verbs")
	}
	return r, nil
}

func list(cell string) []string {
	var out []string
	for _, s := range strings.Split(cell, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
