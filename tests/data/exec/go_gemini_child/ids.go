package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var (
	ulidMu   sync.Mutex
	lastMs   uint64
	lastRand [10]byte
)

// newULID is monotonic: within one millisecond the random part is incremented
// (canonical §6.1 wants ids monotonic per session).
func newULID() string {
	ulidMu.Lock()
	defer ulidMu.Unlock()
	ms := uint64(time.Now().UnixMilli())
	if ms <= lastMs {
		ms = lastMs
		for i := 9; i >= 0; i-- {
			lastRand[i]++
			if lastRand[i] != 0 {
				break
			}
		}
	} else {
		lastMs = ms
		rand.Read(lastRand[:])
		lastRand[0] &= 0x7f // room to increment
	}
	var b [16]byte
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (8 * (5 - i)))
	}
	copy(b[6:], lastRand[:])
	// 128 bits -> 26 base32 chars, the first holding 3 bits.
	out := make([]byte, 26)
	var acc uint64
	bits := 0
	// process as big number: use bit reader
	bitAt := func(i int) byte { return (b[i/8] >> (7 - uint(i%8))) & 1 }
	pos := -2 // 130 bits padded with 2 leading zero bits
	for c := 0; c < 26; c++ {
		acc = 0
		for k := 0; k < 5; k++ {
			acc <<= 1
			if pos >= 0 {
				acc |= uint64(bitAt(pos))
			}
			pos++
		}
		out[c] = crockford[acc]
	}
	_ = bits
	return string(out)
}

// toolMap is the per-session map canonical tu_<ULID> <-> provider id (spec §6.2).
type toolMap struct {
	c2p   map[string]string
	p2c   map[string]string
	order [][2]string
}

func (s *server) mapFor(session string) *toolMap {
	m := s.maps[session]
	if m == nil {
		m = &toolMap{c2p: map[string]string{}, p2c: map[string]string{}}
		s.maps[session] = m
	}
	return m
}

func (m *toolMap) bind(canonical, provider string) bool {
	if p, ok := m.c2p[canonical]; ok {
		return p == provider
	}
	if c, ok := m.p2c[provider]; ok {
		return c == canonical
	}
	m.c2p[canonical] = provider
	m.p2c[provider] = canonical
	m.order = append(m.order, [2]string{canonical, provider})
	return true
}

func (m *toolMap) canonicalFor(provider string) string {
	if c, ok := m.p2c[provider]; ok {
		return c
	}
	c := "tu_" + newULID()
	m.bind(c, provider)
	return c
}

// providerFor a canonical id the session has not seen mints a provider id
// derived from the canonical one (Gemini's functionCall.id is optional and ours).
func (m *toolMap) providerFor(canonical string) string {
	if p, ok := m.c2p[canonical]; ok {
		return p
	}
	p := "call_" + shortHash(canonical)
	for i := 0; ; i++ {
		if _, taken := m.p2c[p]; !taken {
			break
		}
		p = "call_" + shortHash(canonical, string(rune('a'+i%26)), time.Now().String())
	}
	m.bind(canonical, p)
	return p
}

func shortHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// mintCallID derives an id for a call the reply gave none: from what tells one
// reply from another (its responseId) and the call's position, name and args.
func mintCallID(responseID string, index int, name string, args interface{}) string {
	a, _ := json.Marshal(args)
	return "gc_" + shortHash(responseID, itoa(index), name, string(a))
}

func itoa(i int) string { return json.Number(intStr(i)).String() }

func intStr(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b []byte
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

func (s *server) toolIDMap(p obj) (interface{}, *opError) {
	session, _ := p["session_id"].(string)
	call, _ := p["call"].(string)
	args, _ := p["args"].([]interface{})
	arg := func(i int) string {
		if i < len(args) {
			v, _ := args[i].(string)
			return v
		}
		return ""
	}
	m := s.mapFor(session)
	switch call {
	case "canonical_for":
		return obj{"value": m.canonicalFor(arg(0))}, nil
	case "provider_for":
		return obj{"value": m.providerFor(arg(0))}, nil
	case "get_provider":
		if v, ok := m.c2p[arg(0)]; ok {
			return obj{"value": v}, nil
		}
		return obj{"value": nil}, nil
	case "get_canonical":
		if v, ok := m.p2c[arg(0)]; ok {
			return obj{"value": v}, nil
		}
		return obj{"value": nil}, nil
	case "bind":
		if !m.bind(arg(0), arg(1)) {
			e := newErr("adapter_error", "binding "+arg(0)+" to "+arg(1)+" breaks the map's injectivity")
			e.fields["error_class"] = "invalid_request"
			return nil, e
		}
		return obj{"value": nil}, nil
	case "pairs":
		out := [][]string{}
		for _, pr := range m.order {
			out = append(out, []string{pr[0], pr[1]})
		}
		return obj{"value": out}, nil
	}
	return nil, newErr("not_implemented", "tool_id_map call "+call)
}
