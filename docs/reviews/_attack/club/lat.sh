#!/bin/bash
# lat.sh N: send unit2 N times on the device, time each answer (s)
exec 3<>/tmp/review-club/host
for i in $(seq $1); do
  s=$(date +%s.%N); cat /tmp/review-club/unit2 >&3
  if read -t 10 -u 3 line; then e=$(date +%s.%N); printf "%s %.3f\n" "$line" $(echo "$e - $s" | bc); else echo "no answer in 10 s"; fi
  sleep 0.5
done
