#!/bin/sh
# compare.sh A B: the records of two run.sh OUTDIRs must be identical,
# byte for byte.  Prints a unified diff per differing command, naming its
# line, and exits 1 on any difference, 0 when there is none.
A=${1:?usage: compare.sh A B}
B=${2:?usage: compare.sh A B}
diffs=0
for f in "$A"/*.cmd "$B"/*.cmd; do
	id=$(basename "$f" .cmd)
	case " $seen " in *" $id "*) continue ;; esac
	seen="$seen $id"
	for kind in cmd out err rc files; do
		if ! cmp -s "$A/$id.$kind" "$B/$id.$kind"; then
			diffs=$((diffs + 1))
			echo "DIFFER $id.$kind: $(cat "$A/$id.cmd" 2>/dev/null || cat "$B/$id.cmd")"
			diff -u "$A/$id.$kind" "$B/$id.$kind" | sed -n 1,40p
		fi
	done
done
if [ "$diffs" -ne 0 ]; then
	echo "compare.sh: $diffs records differ"
	exit 1
fi
echo "compare.sh: $(ls "$A"/*.cmd | wc -l) command lines identical"
