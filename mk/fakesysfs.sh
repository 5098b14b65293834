#!/bin/sh
# A fake PCI tree for the simulator's cards, so that spyremond's inventory
# (sysfs_root) finds the cards aiu-smi-sim reports: bus IDs 0000:13:00.0,
# 0000:14:00.0, ..., NUMA nodes two cards each, a 16 GT/s x16 link.
#   sh mk/fakesysfs.sh DIR N      makes DIR/bus/pci/devices/... for N cards
set -eu
[ $# -eq 2 ] || { echo "usage: sh mk/fakesysfs.sh DIR N" >&2; exit 2; }
dir=$1 n=$2
i=0
while [ "$i" -lt "$n" ]; do
	dev=$dir/bus/pci/devices/$(printf '0000:%02x:00.0' $((0x13 + i)))
	mkdir -p "$dev"
	echo 0x1014 >"$dev/vendor"
	echo 0x06a7 >"$dev/device"
	echo $((i / 2)) >"$dev/numa_node"
	echo "16.0 GT/s PCIe" >"$dev/current_link_speed"
	echo 16 >"$dev/current_link_width"
	i=$((i + 1))
done
