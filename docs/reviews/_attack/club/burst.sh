#!/bin/bash
# burst.sh N: send N units at once, time until N answers came
exec 3<>/tmp/review-club/host
for i in $(seq $1); do cat /tmp/review-club/unit2; done > /tmp/review-club/burst.in
s=$(date +%s.%N); cat /tmp/review-club/burst.in >&3
n=0; while [ $n -lt $1 ] && read -t 30 -u 3 line; do n=$((n+1)); done
e=$(date +%s.%N); printf "%d answers in %.3f s\n" $n $(echo "$e - $s" | bc)
