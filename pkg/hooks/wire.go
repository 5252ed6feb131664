package hooks

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protocol's messages, encoded by hand with protowire: five messages of bytes and
// strings do not warrant generated code. Field numbers are KubeVirt's (api_info.proto,
// api_v1alpha{1,2,3}.proto).

// message is what the codec moves.
type message interface {
	marshal() []byte
	unmarshal([]byte) error
}

// codec is grpc's encoding.Codec for message; named "proto", as it is on the wire.
type codec struct{}

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(message)
	if !ok {
		return nil, fmt.Errorf("hooks: cannot marshal %T", v)
	}
	return m.marshal(), nil
}

func (codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(message)
	if !ok {
		return fmt.Errorf("hooks: cannot unmarshal into %T", v)
	}
	return m.unmarshal(data)
}

// HookPoint is a point a sidecar subscribes to, with its priority (higher first).
type HookPoint struct {
	Name     string
	Priority int32
}

// Info is what a sidecar says of itself: kubevirt.hooks.info.InfoResult.
type Info struct {
	Name       string
	HookPoints []HookPoint
	Versions   []string
}

// OnDefineDomain is the hook point virt-handler calls (KubeVirt's name).
const OnDefineDomain = "OnDefineDomain"

func (i *Info) marshal() []byte {
	var b []byte
	b = appendString(b, 1, i.Name)
	for _, hp := range i.HookPoints {
		var m []byte
		m = appendString(m, 1, hp.Name)
		if hp.Priority != 0 {
			m = protowire.AppendTag(m, 2, protowire.VarintType)
			m = protowire.AppendVarint(m, uint64(int64(hp.Priority)))
		}
		b = appendBytes(b, 3, m)
	}
	for _, v := range i.Versions {
		b = appendString(b, 4, v)
	}
	return b
}

func (i *Info) unmarshal(data []byte) error {
	*i = Info{}
	return fields(data, func(num protowire.Number, v []byte, n uint64) error {
		switch num {
		case 1:
			i.Name = string(v)
		case 3:
			var hp HookPoint
			err := fields(v, func(num protowire.Number, v []byte, n uint64) error {
				switch num {
				case 1:
					hp.Name = string(v)
				case 2:
					hp.Priority = int32(n)
				}
				return nil
			})
			if err != nil {
				return err
			}
			i.HookPoints = append(i.HookPoints, hp)
		case 4:
			i.Versions = append(i.Versions, string(v))
		}
		return nil
	})
}

// empty is InfoParams, ShutdownParams and ShutdownResult.
type empty struct{}

func (*empty) marshal() []byte { return nil }
func (*empty) unmarshal(data []byte) error {
	return fields(data, func(protowire.Number, []byte, uint64) error { return nil })
}

// DomainParams is OnDefineDomainParams: the domain XML and the instance as JSON.
type DomainParams struct {
	DomainXML []byte
	VMI       []byte
}

func (p *DomainParams) marshal() []byte {
	return appendBytes(appendBytes(nil, 1, p.DomainXML), 2, p.VMI)
}

func (p *DomainParams) unmarshal(data []byte) error {
	*p = DomainParams{}
	return fields(data, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case 1:
			p.DomainXML = v
		case 2:
			p.VMI = v
		}
		return nil
	})
}

// DomainResult is OnDefineDomainResult: the domain XML to define.
type DomainResult struct {
	DomainXML []byte
}

func (r *DomainResult) marshal() []byte { return appendBytes(nil, 1, r.DomainXML) }

func (r *DomainResult) unmarshal(data []byte) error {
	*r = DomainResult{}
	return fields(data, func(num protowire.Number, v []byte, _ uint64) error {
		if num == 1 {
			r.DomainXML = v
		}
		return nil
	})
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// fields walks a message's fields, giving each length-delimited field's bytes (a copy) or
// each varint; fields of other types are skipped, as proto3 parsers do with unknown fields.
func fields(data []byte, each func(num protowire.Number, v []byte, n uint64) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		var (
			v   []byte
			val uint64
		)
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(data)
			v = append([]byte(nil), v...)
		case protowire.VarintType:
			val, n = protowire.ConsumeVarint(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if err := each(num, v, val); err != nil {
			return err
		}
	}
	return nil
}
