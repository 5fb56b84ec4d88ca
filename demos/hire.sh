# Sourced by a demo's setup.sh, which sets hx (the helix-org binary) and
# dir (its own folder, holding roles/<name>.md).
#
# hire <name> <title> <reports-to position or ""> <streams it follows…>
# makes r-<name>, p-<name> and the AI worker w-<name>, each left as it is
# when it exists, so setup.sh may run again.
hire() {
	name=$1 title=$2 boss=$3
	shift 3
	"$hx" call --exists-ok create_role id="r-$name" title="$title" content="$(cat "$dir/roles/$name.md")"
	"$hx" call --exists-ok create_position id="p-$name" role="r-$name" title="$title" ${boss:+reportsTo="$boss"}
	"$hx" call --exists-ok hire_worker id="w-$name" position="p-$name" kind=ai name="$title" grants='["publish","read_events"]'
	for s in "$@"; do
		"$hx" call --exists-ok invite_workers stream="$s" workers="[\"w-$name\"]"
	done
}
