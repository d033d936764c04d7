package club

import (
	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/prune"
)

// registerMetrics adds the daemon's gauges to met, each read from its owner at
// each scrape. updater is nil without the history; keeper is nil without the
// embedded server's history, pruner without the history; hubLinked is nil without a league hub.
func registerMetrics(met *metrics.Metrics, updater *history.Updater, keeper *history.Keeper, pruner *prune.Keeper, hubLinked func() bool, conns ...*nats.Conn) {
	met.BusConnected(func() bool { return bus.AllConnected(conns...) })
	if hubLinked != nil {
		met.Flag("scoreboard_hub_link_up", "1 while the embedded server's leaf link to the league hub is up, 0 while it is down (the club goes on without it).", hubLinked)
	}
	if updater == nil {
		return
	}
	met.Gauge("scoreboard_history_pending", "Results the history's board bucket has not taken yet: queued for its updater, or put and not acked.",
		func() float64 { return float64(updater.Pending()) })
	met.Flag("scoreboard_history_ok", "1 while the history stores the units, 0 while it cannot (the embedded server turned JetStream off: a full disk); the ports answer either way.",
		func() bool { return keeper == nil || keeper.OK() })
	met.Counter("scoreboard_history_units_not_stored_total", "Units the ports read while the history was not storing (a full disk); they were answered.",
		func() float64 {
			if keeper == nil {
				return 0
			}
			return float64(keeper.NotStored())
		})
	met.Counter("scoreboard_history_values_without_unit_total", "Bucket values put without their unit: the unit of the port's latest result was not found in the stream.",
		func() float64 { return float64(updater.LostUnits()) })
	met.Counter("scoreboard_history_reader_resets_total", "Times the history's board reader went on from a consumer made again: a gap in its delivery (a tool pulled from it, review F3; a lost connection) or a restart. What was missed is read again.",
		func() float64 { return float64(updater.ReaderResets()) })
	if pruner == nil {
		return
	}
	met.Counter("scoreboard_history_pruned_messages_total", "Messages of the history's oldest units (a dump and its result are two) dropped to keep it below its max_bytes and max_age a chunk at a time (nats-server would drop them one by one, loading a block of 8 MiB for each).",
		func() float64 { return float64(pruner.Dropped()) })
}
