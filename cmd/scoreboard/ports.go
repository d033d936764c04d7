package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.bug.st/serial"
	"go.bug.st/serial/enumerator"

	"github.com/goclub/scoreboard/serialio"
)

func init() { register(portsCommand) }

// serialPort is one line of `scoreboard ports`.
type serialPort struct {
	Device       string `json:"device"`
	ByID         string `json:"by_id,omitempty"`
	USB          bool   `json:"usb"`
	VID          string `json:"vid,omitempty"`
	PID          string `json:"pid,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Product      string `json:"product,omitempty"`
}

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
	ports, warn := listSerialPorts(enumerator.GetDetailedPortsList, serial.GetPortsList, serialio.ByIDDir)
	if warn != nil {
		fmt.Fprintf(io.err, "scoreboard ports: %v\n", warn)
	}
	if asJSON {
		if ports == nil {
			ports = []serialPort{} // [] rather than null
		}
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(ports)
	}
	return printPorts(io.out, io.err, ports)
}

// listSerialPorts lists the ports enumerate finds, each with the link in byIDDir that
// points at it. go.bug.st/serial's enumerator fails as a whole when one USB device
// lacks a sysfs attribute (a serial number, say); then the ports are listed by name
// only, from names, and warn says why.
func listSerialPorts(enumerate func(...func(vid, pid string) bool) ([]*enumerator.PortDetails, error),
	names func() ([]string, error), byIDDir string) (ports []serialPort, warn error) {
	details, err := enumerate()
	if err != nil {
		warn = fmt.Errorf("no USB details: %w", err)
		list, err := names()
		if err != nil {
			return nil, fmt.Errorf("%w; listing ports: %w", warn, err)
		}
		for _, n := range list {
			details = append(details, &enumerator.PortDetails{Name: n})
		}
	}
	byID := serialio.Links(byIDDir)
	for _, d := range details {
		if d == nil || d.Name == "" {
			continue // the enumerator's placeholder for a tty without a device
		}
		ports = append(ports, serialPort{
			Device:       d.Name,
			ByID:         byID[d.Name],
			USB:          d.IsUSB,
			VID:          d.VID,
			PID:          d.PID,
			SerialNumber: d.SerialNumber,
			Manufacturer: d.Manufacturer,
			Product:      d.Product,
		})
	}
	slices.SortFunc(ports, func(a, b serialPort) int { return strings.Compare(a.Device, b.Device) })
	return ports, warn
}

func printPorts(out, errw io.Writer, ports []serialPort) error {
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
