package forward

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		want    []Port
		wantErr bool
	}{
		{spec: "80", want: []Port{{80, 80, TCP}}},
		{spec: "80,2222:22", want: []Port{{80, 80, TCP}, {2222, 22, TCP}}},
		{spec: "5353:53/udp, 8000:80/TCP", want: []Port{{5353, 53, UDP}, {8000, 80, TCP}}},
		{spec: "53/udp", want: []Port{{53, 53, UDP}}},
		{spec: "", wantErr: true},
		{spec: "80,", wantErr: true},
		{spec: "http", wantErr: true},
		{spec: "0", wantErr: true},
		{spec: "65536", wantErr: true},
		{spec: "80:", wantErr: true},
		{spec: ":80", wantErr: true},
		{spec: "80/sctp", wantErr: true},
		{spec: "1:2:3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := Parse(tt.spec)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse(%q) error = %v, wantErr %v", tt.spec, err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) = %v, want %v", tt.spec, got, tt.want)
			}
		})
	}
}

func TestPortsFlag(t *testing.T) {
	var ps Ports
	if err := ps.Set("80,2222:22"); err != nil {
		t.Fatal(err)
	}
	if err := ps.Set("53/udp"); err != nil {
		t.Fatal(err)
	}
	if got, want := ps.String(), "80:80/tcp,2222:22/tcp,53:53/udp"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// The same number on another protocol is another port; on the same one it is refused.
	if err := ps.Set("80/udp"); err != nil {
		t.Errorf("80/udp beside 80/tcp: %v", err)
	}
	if err := ps.Set("80:8080"); err == nil {
		t.Errorf("listening twice on 80/tcp was accepted")
	}
}
