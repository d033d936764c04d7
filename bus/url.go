package bus

import "strings"

// EnvURL is the environment variable every NATS client honours (the nats CLI,
// nats.go's examples) for the server to connect to.
const EnvURL = "NATS_URL"

// DefaultURL is where a tool connects when it is given no URL: $NATS_URL when set,
// else a local daemon's embedded server. getenv is os.Getenv (a parameter, for tests
// and for the command line's declarations, which show the default).
func DefaultURL(getenv func(string) string) string {
	if u := strings.TrimSpace(getenv(EnvURL)); u != "" {
		return u
	}
	return "nats://" + DefaultListen
}
