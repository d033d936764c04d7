package pairing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
)

// BucketConfig is the bucket under prefix: one value per port, on disk (a loaded
// round survives restarts; nothing could make it again).
func BucketConfig(prefix string, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      Bucket(prefix),
		Description: "scoreboard: the game on each port now (round, table, players), from the pairing program's file",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
		MaxBytes:    64 << 20,
	}
}

// Setup creates the bucket under prefix, or updates it.
func Setup(ctx context.Context, js jetstream.JetStream, prefix string, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, BucketConfig(prefix, replicas))
	if err != nil {
		return nil, fmt.Errorf("pairing: bucket %s: %w", Bucket(prefix), err)
	}
	return kv, nil
}

// HistorySource is the source the club's history stream takes from the bucket:
// each value, under Subject(prefix, port), where the hub's sourcing of the history
// finds it.
func HistorySource(prefix string) *jetstream.StreamSource {
	b := Bucket(prefix)
	return &jetstream.StreamSource{
		Name: "KV_" + b,
		SubjectTransforms: []jetstream.SubjectTransformConfig{{
			Source: "$KV." + b + ".*", Destination: prefix + ".pairing.{{wildcard(1)}}",
		}},
	}
}

// ForPort is the game on the port of key (a club's port; at a hub <club>.<port>)
// now: ok false when there is none (no round loaded, or none for its table).
func ForPort(ctx context.Context, kv jetstream.KeyValue, key string) (c Current, ok bool, err error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("pairing: get %s: %w", key, err)
	}
	c, err = Decode(e.Value())
	if err != nil {
		return c, false, fmt.Errorf("pairing: %s: %w", key, err)
	}
	return c, c.Table != 0, nil
}

// Change is one port's game changed: Current nil when the port has no game now.
// Ready is the one change that says every value there was has been given.
type Change struct {
	Key     string
	Current *Current
	Ready   bool
}

// Follow calls fn with every port's game, then Ready, then every change, until
// ctx ends (nil) or the watch does (its error). A value that does not decode is
// a port without a game.
func Follow(ctx context.Context, kv jetstream.KeyValue, fn func(Change)) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("pairing: watch: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("pairing: the watch was closed")
			}
			if e == nil {
				fn(Change{Ready: true})
				continue
			}
			ch := Change{Key: e.Key()}
			if e.Operation() == jetstream.KeyValuePut {
				if c, err := Decode(e.Value()); err == nil && c.Table != 0 {
					ch.Current = &c
				}
			}
			fn(ch)
		}
	}
}

// Apply writes a round: each table's game to the port tables maps it to, and "no
// game" (the round's Info, Table 0) to every other port the bucket holds or that
// ports names, so that no port shows a game of the round before. It returns what
// it did; a put that fails stops it (the error names the port; loading again
// completes it).
func Apply(ctx context.Context, kv jetstream.KeyValue, r Round, tables map[int]string, ports []string, at time.Time) (Report, error) {
	var rep Report
	if err := Check(r); err != nil {
		return rep, err
	}
	rep.Ports = map[int]string{}
	given := map[string]bool{}
	for _, g := range r.Games {
		key, ok := tables[g.Table]
		if !ok {
			rep.NoPort = append(rep.NoPort, g.Table)
			continue
		}
		if err := put(ctx, kv, key, Current{Info: r.Info, Game: g, Loaded: at}); err != nil {
			return rep, err
		}
		rep.Ports[g.Table] = key
		given[key] = true
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return rep, fmt.Errorf("pairing: list the bucket's keys: %w", err)
	}
	others := slices.Clone(ports)
	if keys != nil {
		for k := range keys.Keys() {
			others = append(others, k)
		}
	}
	slices.Sort(others)
	for _, key := range slices.Compact(others) {
		if given[key] {
			continue
		}
		if err := put(ctx, kv, key, Current{Info: r.Info, Loaded: at}); err != nil {
			return rep, err
		}
		rep.Cleared = append(rep.Cleared, key)
	}
	slices.Sort(rep.NoPort)
	return rep, nil
}

func put(ctx context.Context, kv jetstream.KeyValue, key string, c Current) error {
	if _, err := kv.Put(ctx, key, c.Encode()); err != nil {
		return fmt.Errorf("pairing: put %s: %w (nothing after it was written; load the file again)", key, err)
	}
	return nil
}

// ValidKey reports whether key can be a bucket's key: a port's name, or at a hub
// <club>.<port>.
func ValidKey(key string) bool {
	return bus.ValidToken(key) || bus.ValidPrefix(key) && len(key) <= 2*bus.MaxToken+1
}
