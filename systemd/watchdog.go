package systemd

import (
	"context"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/rs/zerolog"
)

// Check reports whether the daemon is healthy: nil when it is, or why it is not.
// It must return within the context's deadline.
type Check func(ctx context.Context) error

// All combines checks: healthy when every one is, else the first failure.
func All(checks ...Check) Check {
	return func(ctx context.Context) error {
		for _, c := range checks {
			if err := c(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// Watch runs the watchdog loop for the interval systemd asked for ($WATCHDOG_USEC),
// until ctx ends. Without a watchdog, or without a notify socket, it returns at once.
func (n *Notifier) Watch(ctx context.Context, check Check, log zerolog.Logger) error {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval == 0 || !n.Enabled() {
		return err
	}
	n.RunWatchdog(ctx, interval, check, log)
	return nil
}

// RunWatchdog sends WATCHDOG=1 every half interval, but only while check passes: a
// daemon that is alive but stuck (bus gone, an actor dead) stops pinging, and systemd
// restarts it once the interval runs out. It logs once when the check starts failing
// and once when it recovers, not on every tick, and meanwhile the status starts with
// "unhealthy: " and the check's error. It returns when ctx ends.
func (n *Notifier) RunWatchdog(ctx context.Context, interval time.Duration, check Check, log zerolog.Logger) {
	period := interval / 2
	if period <= 0 {
		period = interval
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	var failing error
	for {
		// A check may not take longer than a tick, or a slow check would itself make
		// the pings late.
		cctx, cancel := context.WithTimeout(ctx, period)
		err := check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		// The status says why, so that systemctl status shows it before the watchdog
		// runs out.
		switch {
		case err != nil && failing == nil:
			log.Error().Err(err).Dur("watchdog_ms", interval).Msg("health check failing: watchdog pings stopped")
			if err := n.setUnhealthy(err.Error()); err != nil {
				log.Warn().Err(err).Msg("status to systemd")
			}
		case err == nil && failing != nil:
			log.Info().Msg("health check passing again: watchdog pings resumed")
			if err := n.setUnhealthy(""); err != nil {
				log.Warn().Err(err).Msg("status to systemd")
			}
		}
		failing = err
		if err == nil {
			if err := n.Watchdog(); err != nil {
				log.Warn().Err(err).Msg("watchdog ping")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// RunStatus sends STATUS= every period with what status returns, when it changed
// since the last one sent, until ctx ends: systemctl status then shows the daemon's
// counts (ports open, units answered, errors) as they are.
func (n *Notifier) RunStatus(ctx context.Context, period time.Duration, status func() string, log zerolog.Logger) {
	if !n.Enabled() {
		return
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	var last string
	for {
		if s := status(); s != last {
			if err := n.Status(s); err != nil {
				log.Warn().Err(err).Msg("status to systemd")
			}
			last = s
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
