package bus

import "time"

// PortState is what the daemon publishes on <prefix>.port.<port>: whether a port's
// device is open, and since when. It is published when the state changes and again
// every few seconds, so that a page or tool started later learns it without asking.
type PortState struct {
	Port string `json:"port"`
	// State is "open", "unplugged" (the daemon waits for the device to come back) or
	// "stopped" (the port's actors have ended: stdin ended, or the daemon stops).
	State string    `json:"state"`
	Since time.Time `json:"since"`
}

// The states of a PortState.
const (
	PortOpen      = "open"
	PortUnplugged = "unplugged"
	PortStopped   = "stopped"
)

// PortState is the subject of a port's state.
func (s Subjects) PortState(port string) string { return s.Prefix + ".port." + port }

// AllPortStates matches every port's state.
func (s Subjects) AllPortStates() string { return s.Prefix + ".port.*" }
