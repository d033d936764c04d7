package daemon

import "time"

// busyTick is the display writer's tick while units are in flight: an eighth of
// the request timeout, and never longer than the idle one (the health check's bound
// is the same whether units are in flight or not).
func (d *display) busyTick() time.Duration {
	return min(max(d.cfg.RequestTimeout/8, time.Millisecond), idleTick(d.cfg.Monitor, time.Millisecond, true))
}

// turn is the tick's work: the attempts timed out, the line ends, the health beat.
func (d *display) turn(now time.Time) {
	d.expire(now)
	d.lineEnds(now)
	d.cfg.Monitor.beat(d.pc.Name)
}

// idleTick is the display writer's tick: busy while units are in flight, else a
// quarter of the health check's staleness bound (10 s by default), never faster.
func idleTick(m *Monitor, busy time.Duration, idle bool) time.Duration {
	if !idle {
		return busy
	}
	stale := 10 * time.Second
	if m != nil && m.Stale > 0 {
		stale = m.Stale
	}
	return max(stale/4, busy)
}

// noLineEndWait is how long bytes may wait for a line end before the port is said
// to receive none: far longer than the longest line of any problem takes at 300 baud.
const noLineEndWait = 10 * time.Second

// lineEnds says once, in the log and the monitor (systemd's status, /metrics), when
// the port receives bytes but no line ends: a device that ends its lines in
// something else than "\n", "\r\n" or "\r", or not at all, or a line set at the
// wrong speed, would otherwise show an open port and no unit, for ever, in silence.
func (d *display) lineEnds(now time.Time) {
	if d.stats == nil {
		return
	}
	none := d.stats.NoLineEnds(now, d.maxLine, d.cfg.noLineEndWait)
	if none == d.unended {
		return
	}
	d.unended = none
	d.cfg.Monitor.unended(d.pc.Name, none)
	if !none {
		d.log.Info().Msg("the port has no more bytes waiting for a line end")
		return
	}
	n, waited := d.stats.Unended(now)
	d.log.Warn().Int64("bytes", n).Dur("waited_ms", waited).Int64("line_ends", d.stats.Ends()).Int("max_line", d.maxLine).
		Msg("the port receives bytes but no line ends: no unit can be read; the device must end its lines in \\n, \\r\\n or \\r (check its line settings too: a wrong baud rate reads as noise)")
}

const stopGiveUp = "daemon stopping: no answer within the drain bound"
