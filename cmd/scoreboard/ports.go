package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/serialio"
)

func init() { register(portsCommand) }

func portsCommand(io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ports",
		Short: "lists serial ports (USB vendor, product, serial number, /dev/serial/by-id path)",
		Long: "Lists the serial ports of this machine: the device, its USB vendor and product\n" +
			"ids, serial number, manufacturer and product, and the stable " + serialio.ByIDDir + "\n" +
			"path that links to it, if any. Configure a port by that path: it names the same\n" +
			"adapter whichever ttyUSB number it gets after a replug.",
		Args: noArgs("takes no arguments"),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	cmd.RunE = func(*cobra.Command, []string) error { return ports(asJSON, io) }
	return cmd
}

func ports(asJSON bool, io stdio) error {
	ports, warn := serialio.ListPorts()
	if warn != nil {
		fmt.Fprintf(io.err, "scoreboard ports: %v\n", warn)
	}
	if asJSON {
		if ports == nil {
			ports = []serialio.Listed{} // [] rather than null
		}
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(ports)
	}
	return printPorts(io.out, io.err, ports)
}

func printPorts(out, errw io.Writer, ports []serialio.Listed) error {
	if len(ports) == 0 {
		fmt.Fprintln(errw, "scoreboard ports: no serial ports found (is the adapter plugged in? `dmesg` shows it when it is)")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tVID:PID\tSERIAL\tMANUFACTURER\tPRODUCT\tBY-ID")
	for _, p := range ports {
		id := "-"
		if p.USB {
			id = p.VID + ":" + p.PID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Device, id, dash(p.SerialNumber), dash(p.Manufacturer), dash(p.Product), dash(p.ByID))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
