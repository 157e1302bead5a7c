package main

// Ids (canonical §6.1, §6.2): ULIDs, canonical tool ids `tu_<ULID>`, and the per-session
// bidirectional map between canonical tool ids and the provider's.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var ulidState struct {
	sync.Mutex
	ms     int64
	random [10]byte
}

// NewULID returns a ULID (48 bits of milliseconds, 80 random bits), monotonic within this
// process: within one millisecond the random part counts up.
func NewULID() string {
	s := &ulidState
	s.Lock()
	defer s.Unlock()
	now := time.Now().UnixMilli()
	if now > s.ms {
		s.ms = now
		if _, err := rand.Read(s.random[:]); err != nil {
			panic(fmt.Sprintf("no randomness for a ULID: %v", err))
		}
	} else {
		i := len(s.random) - 1
		for i >= 0 && s.random[i] == 0xff {
			s.random[i] = 0
			i--
		}
		if i < 0 {
			s.ms++ // 2^80 ids in one millisecond: borrow the next one
		} else {
			s.random[i]++
		}
	}
	return encodeULID(s.ms, s.random)
}

// DerivedToolID is a canonical tool id derived from parts (a call the API gave no id:
// canonical §6.2 wants one). Same parts, same id: its time part is 0 and its 80 other bits
// a SHA-256 of the parts, each prefixed by its length so that no two lists of parts spell
// the same bytes.
func DerivedToolID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var random [10]byte
	copy(random[:], h.Sum(nil))
	return "tu_" + encodeULID(0, random)
}

// encodeULID is 48 bits of milliseconds and 80 bits as 26 Crockford base32 digits.
func encodeULID(ms int64, random [10]byte) string {
	var b [16]byte
	for k := 0; k < 6; k++ {
		b[k] = byte(ms >> (8 * (5 - k)))
	}
	copy(b[6:], random[:])
	// 128 bits as 26 base32 digits, the first holding the top 3 bits
	out := make([]byte, 26)
	var acc uint64
	bits := 0
	pos := 25
	for k := 15; k >= 0; k-- {
		acc |= uint64(b[k]) << bits
		bits += 8
		for bits >= 5 && pos >= 0 {
			out[pos] = crockford[acc&31]
			acc >>= 5
			bits -= 5
			pos--
		}
	}
	if pos == 0 {
		out[0] = crockford[acc&31]
	}
	return string(out)
}

// NewToolID returns a canonical tool call id (canonical §6.2).
func NewToolID() string { return "tu_" + NewULID() }

// ToolIDMap maps canonical `tu_<ULID>` <-> provider tool ids for one session (canonical
// §6.2). Injective both ways: Bind refuses a pair when either side is mapped to another.
type ToolIDMap struct {
	toProvider  map[string]string
	toCanonical map[string]string
	order       []string // canonical ids in the order they were bound
	newProvider func() string
}

// NewToolIDMap returns an empty map whose minted provider ids come from newProvider.
func NewToolIDMap(newProvider func() string) *ToolIDMap {
	return &ToolIDMap{map[string]string{}, map[string]string{}, nil, newProvider}
}

// Bind maps canonicalID <-> providerID, or fails when either side is mapped to another.
func (m *ToolIDMap) Bind(canonicalID, providerID string) error {
	p, hasP := m.toProvider[canonicalID]
	c, hasC := m.toCanonical[providerID]
	if hasP && hasC && p == providerID && c == canonicalID {
		return nil
	}
	if hasP || hasC {
		return fmt.Errorf("cannot bind %s <-> %s: one side is mapped", canonicalID, providerID)
	}
	m.toProvider[canonicalID] = providerID
	m.toCanonical[providerID] = canonicalID
	m.order = append(m.order, canonicalID)
	return nil
}

// CanonicalFor is for parsing wire -> canonical: the canonical id of a provider id, minted
// on first sight.
func (m *ToolIDMap) CanonicalFor(providerID string) string {
	if c, ok := m.toCanonical[providerID]; ok {
		return c
	}
	c := NewToolID()
	_ = m.Bind(c, providerID) // a fresh canonical id and an unmapped provider id always bind
	return c
}

// ProviderFor is for rendering canonical -> wire: the provider id of a canonical id,
// minted on first use.
func (m *ToolIDMap) ProviderFor(canonicalID string) string {
	if p, ok := m.toProvider[canonicalID]; ok {
		return p
	}
	p := m.newProvider()
	for m.toCanonical[p] != "" {
		p = m.newProvider()
	}
	_ = m.Bind(canonicalID, p)
	return p
}

// GetProvider is the provider id of a canonical id, if mapped.
func (m *ToolIDMap) GetProvider(canonicalID string) (string, bool) {
	p, ok := m.toProvider[canonicalID]
	return p, ok
}

// GetCanonical is the canonical id of a provider id, if mapped.
func (m *ToolIDMap) GetCanonical(providerID string) (string, bool) {
	c, ok := m.toCanonical[providerID]
	return c, ok
}

// Pairs is every (canonical, provider) pair, in the order they were bound.
func (m *ToolIDMap) Pairs() [][2]string {
	out := make([][2]string, 0, len(m.order))
	for _, c := range m.order {
		out = append(out, [2]string{c, m.toProvider[c]})
	}
	return out
}
