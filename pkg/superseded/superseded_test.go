package superseded

import "testing"

func TestVersions(t *testing.T) {
	v := New()
	if v.Stale("ns/a", "1") {
		t.Error("nothing written: nothing is stale")
	}
	v.Wrote("ns/a", "1")
	if !v.Stale("ns/a", "1") || !v.Stale("ns/a", "1") {
		t.Error("the version a write replaced is stale until the cache moves on")
	}
	if v.Stale("ns/b", "1") {
		t.Error("another key is not")
	}
	if v.Stale("ns/a", "2") {
		t.Error("the cache caught up: version 2 is current")
	}
	if v.Stale("ns/a", "1") {
		t.Error("once caught up, the record is gone")
	}
	v.Wrote("ns/a", "2")
	v.Forget("ns/a")
	if v.Stale("ns/a", "2") {
		t.Error("forgotten")
	}
}
