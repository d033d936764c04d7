// cfg: hostile values in a hub's [[club]] tables, through league.ParseConfig.
package main

import (
	"fmt"

	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
)

func main() {
	for _, v := range []string{"8EiB", "9223372036854775807", "9223372036854775808", "16EiB", "1e30", "0x10", "-1", "1.5GiB", "99999999999999999999TiB", " 1GiB", "1GiB\n"} {
		n, err := history.ParseSize(v)
		fmt.Printf("ParseSize(%q) = %d, %v\n", v, n, err)
	}
	for _, v := range []string{"106751d", "106752d", "9999999999d", "2562047h", "2562048h", "1d-1h", "-1d", "0.5d", "1e9d", "292y"} {
		n, err := history.ParseAge(v)
		fmt.Printf("ParseAge(%q) = %v, %v\n", v, n, err)
	}
	for _, d := range []string{"-1s", "24h0m1s", "1ns", "9223372036s"} {
		_, err := league.ParseConfig("x", []byte("[[club]]\nname=\"a\"\ntoken=\"t\"\ndelay=\""+d+"\"\n"))
		fmt.Printf("delay %q: %v\n", d, err)
	}
	for _, tok := range []string{"a\x00b", "\u00a0x", "x\u2028y", "", "\x00not a club"} {
		_, err := league.ParseConfig("x", []byte(fmt.Sprintf("[[club]]\nname=\"a\"\ntoken=%q\n", tok)))
		fmt.Printf("token %q: %v\n", tok, err)
	}
}
