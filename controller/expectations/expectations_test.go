package expectations

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	const key = "ns/vm"
	tests := []struct {
		name  string
		steps func(e *Expectations, clock *clocktesting.FakePassiveClock)
		want  bool
	}{
		{name: "nothing recorded", steps: func(*Expectations, *clocktesting.FakePassiveClock) {}, want: true},
		{name: "creation pending", steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) { e.ExpectCreations(key, 1) }, want: false},
		{name: "creation observed", want: true, steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
			e.ExpectCreations(key, 1)
			e.CreationObserved(key)
		}},
		{name: "one of two creations observed", want: false, steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
			e.ExpectCreations(key, 2)
			e.CreationObserved(key)
		}},
		{name: "extra observations do not go negative", want: false, steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
			e.CreationObserved(key)
			e.CreationObserved(key)
			e.ExpectCreations(key, 1)
		}},
		{name: "deletion observed twice counts once", want: false, steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
			e.ExpectDeletions(key, "a", "b")
			e.DeletionObserved(key, "a")
			e.DeletionObserved(key, "a")
		}},
		{name: "all deletions observed", want: true, steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
			e.ExpectDeletions(key, types.UID("a"), types.UID("b"))
			e.DeletionObserved(key, "b")
			e.DeletionObserved(key, "a")
		}},
		{name: "expired after the TTL", want: true, steps: func(e *Expectations, c *clocktesting.FakePassiveClock) {
			e.ExpectCreations(key, 1)
			c.SetTime(c.Now().Add(time.Minute + time.Second))
		}},
		{name: "new expectation after expiry starts a fresh TTL", want: false, steps: func(e *Expectations, c *clocktesting.FakePassiveClock) {
			e.ExpectCreations(key, 1)
			c.SetTime(c.Now().Add(2 * time.Minute))
			e.ExpectCreations(key, 1)
		}},
		{name: "forgotten", want: true, steps: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
			e.ExpectCreations(key, 3)
			e.Forget(key)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakePassiveClock(time.Now())
			e := NewWithClock(clock, time.Minute)
			tt.steps(e, clock)
			if got := e.Satisfied(key); got != tt.want {
				t.Errorf("Satisfied = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeletionPending(t *testing.T) {
	const key = "ns/vm"
	clock := clocktesting.NewFakePassiveClock(time.Now())
	e := NewWithClock(clock, time.Minute)
	e.ExpectDeletions(key, "a")
	for _, step := range []struct {
		name string
		do   func()
		uid  types.UID
		want bool
	}{
		{"expected", func() {}, "a", true},
		{"another object", func() {}, "b", false},
		{"observed", func() { e.DeletionObserved(key, "a") }, "a", false},
		{"expected again, then expired", func() { e.ExpectDeletions(key, "a"); clock.SetTime(clock.Now().Add(2 * time.Minute)) }, "a", false},
	} {
		step.do()
		if got := e.DeletionPending(key, step.uid); got != step.want {
			t.Errorf("%s: DeletionPending(%s) = %v, want %v", step.name, step.uid, got, step.want)
		}
	}
}
