package daemon

import (
	"sync"
	"sync/atomic"
)

// recentUnits is how many of a port's last units Recent keeps: more than a port has
// in flight (MaxInFlight), so a result that comes while the port reads on at full
// speed still finds its unit.
const recentUnits = 1024

// recentBytes bounds the bytes of a port's units Recent keeps: 1,024 capture games
// of 1.6 MB would be 1.6 GB (review F10). Past it the oldest are let go, and the
// history looks their unit up in the stream; a unit larger than the bound is kept
// alone.
const recentBytes = 16 << 20

// Recent keeps the text of each port's last units, for the history's bucket: its
// value of a port holds the unit of the port's latest result, and looking that up
// here costs nothing, while a look in the stream loads the block the stream is
// writing, which then cannot be recycled (8 MB a block, held ten seconds: at a
// flood, over a hundred megabytes, and a collector busy near the memory limit).
// Safe for concurrent use.
type Recent struct {
	mu    sync.Mutex
	ports map[string]*recentPort
	units atomic.Uint64
}

// Units is how many units the ports have published since the start: what the
// history counts as not stored while it cannot store. Safe for concurrent use.
func (r *Recent) Units() uint64 { return r.units.Load() }

type recentPort struct {
	origin string
	seqs   [recentUnits]uint64
	units  [recentUnits][]byte
	bytes  int // of units
}

// NewRecent makes an empty Recent; give it to the daemon in Config.Recent.
func NewRecent() *Recent { return &Recent{ports: map[string]*recentPort{}} }

// Unit is the text of the unit seq that port read under origin, or nil if it is not
// one of the port's last units.
func (r *Recent) Unit(port, origin string, seq uint64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.ports[port]
	if p == nil || p.origin != origin || p.seqs[seq%recentUnits] != seq {
		return nil
	}
	return p.units[seq%recentUnits]
}

// add records a unit the port's display writer publishes. A port started again
// (another origin) starts afresh. A nil Recent records nothing.
func (r *Recent) add(port, origin string, seq uint64, unit []byte) {
	if r == nil {
		return
	}
	r.units.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.ports[port]
	if p == nil || p.origin != origin {
		p = &recentPort{origin: origin}
		r.ports[port] = p
	}
	i := seq % recentUnits
	p.bytes += len(unit) - len(p.units[i])
	p.seqs[i], p.units[i] = seq, unit
	// The oldest go first: from the slot after this one, round to it.
	for k := uint64(1); k < recentUnits && p.bytes > recentBytes; k++ {
		j := (i + k) % recentUnits
		p.bytes -= len(p.units[j])
		p.seqs[j], p.units[j] = 0, nil
	}
}
