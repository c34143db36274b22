#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's Slurm job array, for real: Debian's slurm-wlm and munge,
# started here under $TMP (a munge key made for the test, its own munged
# socket, slurm.conf, state, spool and log folders, free loopback ports),
# slurmctld and slurmd on localhost with one node of two CPUs. The README's
# shards.sbatch and its submit lines run as written, with three values put
# in (the recordings' folder, --array=0-3, --cpus-per-task=1), over 4 shards
# of six small synthetic recordings; then the merged store must equal one
# unsharded run over the same recordings at --jobs 2 (QA ids, questions,
# options, answers, truth, QC, drops, traces, and the jsonl export less run
# ids and times), and a task requeued on its own must leave a merge that
# adds nothing. The daemons and munged are stopped on success and failure
# alike. Skipped only where they cannot run: not root, the packages cannot
# be installed, or no /proc.
. tests/cli/lib.sh

# ---- can Slurm run here at all?
if [ "$(id -u)" != 0 ]; then
	skip_all "not root: slurmd and munged must run as root, and slurm-wlm and munge be installed"
	exit 0
fi
if ! sh scripts/setup.sh slurm-wlm munge >"$TMP/setup.log" 2>&1; then
	skip_all "slurm-wlm and munge cannot be installed: $(grep -v '^setup:' "$TMP/setup.log" | tail -n 1)"
	exit 0
fi
if [ ! -r /proc/self/stat ]; then
	skip_all "no /proc here, so proctrack/linuxproc cannot follow the jobs"
	exit 0
fi
for c in munged mungekey munge unmunge slurmctld slurmd sbatch squeue scontrol scancel sinfo sqlite3 sha256sum; do
	command -v "$c" >/dev/null 2>&1 && continue
	not_ok "'$c' is not installed after scripts/setup.sh slurm-wlm munge"
	done_testing
	exit 0
done

# a Slurm around this test (make test run inside a job) must not steer sbatch
for v in $(env | sed -n 's/^\(S\(LURM\|BATCH\|QUEUE\|INFO\)_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done

# ---- layout: all of it under $TMP
chmod 755 "$TMP" # munged wants every folder above its socket searchable by all
K="$TMP/key"     # the munge key, 0700
R="$TMP/run"     # the munge socket and the pid files
S="$TMP/slurm"   # slurm.conf, state, spool, logs
W="$TMP/work"    # the submit folder: ./proxima, shards.sbatch, recordings/, shards/
mkdir -p "$K" "$R" "$S/state" "$S/spool" "$S/log" "$W/recordings" "$W/tmp"
chmod 700 "$K"
chmod 755 "$R"
conf="$S/slurm.conf"

# ---- stopping everything this test started, on any exit
munged_pid=""
ctld_pid=""
slurmd_pid=""
alive() { # PID: running, and not a zombie waiting to be reaped
	[ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ]
}
stop_pid() { # PID: SIGTERM, up to 30 s to exit, then SIGKILL; reaps it
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	i=0
	while alive "$1" && [ "$i" -lt 150 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	alive "$1" && kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# job processes (slurmstepd and what it runs) carry SLURM_CONF=$conf, from
# this script through sbatch (so do the daemons), or work in a folder under
# $TMP. job_pids sets $pids to them; it runs in this shell, since a subshell
# would find itself.
ppid_of() { sed 's/^.*) . \([0-9]*\) .*/\1/' "/proc/$1/stat" 2>/dev/null; }
job_pids() {
	pids=""
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		# not this shell, nor the daemons
		case " $$ $munged_pid $ctld_pid $slurmd_pid " in *" $p "*) continue ;; esac
		[ -r "$d/environ" ] || continue
		if ! tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qxF "SLURM_CONF=$conf"; then
			case $(readlink "$d/cwd" 2>/dev/null) in
			"$TMP"/*) ;;
			*) continue ;;
			esac
		fi
		# nor slurmctld's slurmscriptd, which ends with it
		[ -n "$ctld_pid" ] && [ "$(ppid_of "$p")" = "$ctld_pid" ] && continue
		alive "$p" && pids="$pids $p"
	done
}
stopped=""
stop_all() {
	[ -n "$stopped" ] && return 0
	stopped=1
	if [ -n "$ctld_pid" ] && alive "$ctld_pid"; then
		scancel --quiet --full --user=root 2>/dev/null
		i=0
		while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ "$i" -lt 30 ]; do
			sleep 1
			i=$((i + 1))
		done
	fi
	# the job steps end shortly after their jobs leave the queue
	i=0
	job_pids
	while [ -n "$pids" ] && [ "$i" -lt 50 ]; do
		sleep 0.2
		i=$((i + 1))
		job_pids
	done
	stop_pid "$slurmd_pid"
	stop_pid "$ctld_pid"
	stop_pid "$munged_pid"
	job_pids
	for p in $pids; do
		stop_pid "$p"
	done
}
trap 'stop_all; rm -rf "$TMP"' EXIT
trap 'exit 1' HUP INT TERM

# fail_here NAME LOG...: a step that cannot go on; shows the logs and ends the test
fail_here() {
	not_ok "$1"
	shift
	for f in "$@"; do
		[ -s "$f" ] || continue
		echo "# --- $f"
		tail -n 15 "$f" | sed 's/^/#   /'
	done
	done_testing
	exit 0
}

# ---- two free TCP ports on the loopback (none listening in /proc/net/tcp*)
in_use=$(awk '$1 != "sl" { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
	sort -u | while read -r h; do printf '%d\n' "0x$h"; done)
port_free() { ! printf '%s\n' "$in_use" | grep -qx "$1"; }
ctld_port=""
p=$((20000 + ($$ % 20000) * 2))
i=0
while [ "$i" -lt 200 ]; do
	if port_free "$p" && port_free $((p + 1)); then
		ctld_port=$p
		break
	fi
	p=$((p + 2))
	[ "$p" -ge 60000 ] && p=20000
	i=$((i + 1))
done
[ -n "$ctld_port" ] || fail_here "no two free loopback ports between 20000 and 60000"
slurmd_port=$((ctld_port + 1))

# ---- munged with a key made for this test
expect_status 0 "mungekey makes a key for the test" mungekey --create --keyfile="$K/munge.key"
export SLURM_CONF="$conf"
munged -F --socket="$R/munge.sock" --key-file="$K/munge.key" --pid-file="$R/munged.pid" \
	--seed-file="$K/munged.seed" --log-file="$S/log/munged.log" >"$S/log/munged.out" 2>&1 &
munged_pid=$!
i=0
until munge -S "$R/munge.sock" -n 2>/dev/null | unmunge -S "$R/munge.sock" >/dev/null 2>&1; do
	i=$((i + 1))
	{ [ "$i" -ge 50 ] || ! alive "$munged_pid"; } &&
		fail_here "munged starts on its own socket" "$S/log/munged.out"
	sleep 0.2
done
ok "munged answers on its own socket (a credential made and decoded)"

# ---- slurm.conf: one node of two CPUs on localhost, no cgroups, no accounting
host=$(hostname -s 2>/dev/null || uname -n | cut -d. -f1)
cat >"$conf" <<EOF
ClusterName=proximatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$R/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$R/slurmctld.pid
SlurmdPidFile=$R/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
KillWait=5
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=main Nodes=n1 Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -f "$conf" >"$S/log/slurmctld.out" 2>&1 &
ctld_pid=$!
i=0
until scontrol ping 2>/dev/null | grep -q 'is UP'; do
	i=$((i + 1))
	{ [ "$i" -ge 100 ] || ! alive "$ctld_pid"; } &&
		fail_here "slurmctld starts on port $ctld_port" "$S/log/slurmctld.out" "$S/log/slurmctld.log"
	sleep 0.2
done
ok "slurmctld is up on 127.0.0.1:$ctld_port"
slurmd -D -f "$conf" -N n1 >"$S/log/slurmd.out" 2>&1 &
slurmd_pid=$!
i=0
until [ "$(sinfo -h -n n1 -o %T 2>/dev/null)" = idle ]; do
	i=$((i + 1))
	{ [ "$i" -ge 150 ] || ! alive "$slurmd_pid"; } &&
		fail_here "slurmd brings node n1 up (sinfo says '$(sinfo -h -n n1 -o %T 2>&1)')" \
			"$S/log/slurmd.out" "$S/log/slurmd.log" "$S/log/slurmctld.log"
	sleep 0.2
done
s=$(sinfo -h -n n1 -o '%c %T')
[ "$s" = "2 idle" ] && ok "node n1 is idle with 2 CPUs" || not_ok "sinfo says '$s'"

# ---- six small recordings
i=0
for scene in kitchen apartment office kitchen apartment office; do
	i=$((i + 1))
	expect_status 0 "synth $scene, seed $i" "$PROXIMA" synth --scene "$scene" --minutes 0.5 \
		--seed "$i" -o "$W/recordings/r$i"
done
ids=""
for r in "$W"/recordings/r*; do
	ids="$ids $(sed -n 's/^ *"id": *"\([^"]*\)".*/\1/p' "$r/recording.json" | head -n 1)"
done
# the shard of an id under N = 4: its SHA-256's first 8 bytes modulo 4, the 16th hex digit's
shard_of() { d=$(printf %s "$1" | sha256sum | cut -c16); echo $((0x$d % 4)); }
spread=""
for id in $ids; do spread="$spread $(shard_of "$id")"; done
s=$(printf '%s\n' $spread | sort -u | tr -d '\n')
[ "$s" = 0123 ] && ok "the six recordings fall in all four shards ($spread)" ||
	not_ok "the recordings fall in shards$spread only"

# ---- the README's commands: its two sh blocks of "Past one machine"
block() {
	awk -v n="$1" '/^## / { in_sec = ($0 == "## Past one machine") }
		in_sec && /^```/ { if (in_b) { in_b = 0; next } if ($0 == "```sh") { k++; in_b = 1; next } }
		in_sec && in_b && k == n' README.md
}
block 1 >"$TMP/readme.sbatch"
block 2 >"$TMP/readme.submit"
[ -s "$TMP/readme.sbatch" ] && [ -s "$TMP/readme.submit" ] &&
	ok "README.md's Past one machine has the sbatch script and the submit lines" ||
	fail_here "README.md's Past one machine section has no two sh blocks"
# put FILE FROM TO: the one line holding FROM gets TO in its place
put() {
	n=$(grep -cF -- "$2" "$1")
	if [ "$n" -ne 1 ]; then
		not_ok "README.md: '$2' is on $n lines of $(basename "$1"), wanted 1 (update this test)"
		return
	fi
	sed "s|$3|$4|" "$1" >"$1.new" && mv "$1.new" "$1"
}
cp "$TMP/readme.sbatch" "$W/shards.sbatch"
put "$W/shards.sbatch" '/data/recordings/*' '/data/recordings/\*' "$W/recordings/*"
cp "$TMP/readme.submit" "$TMP/submit.sh"
put "$TMP/submit.sh" '--array=0-15' '--array=0-15' '--array=0-3'
put "$TMP/submit.sh" '--cpus-per-task=8' '--cpus-per-task=8' '--cpus-per-task=1'
# nothing else differs from the README
d=$(diff "$TMP/readme.sbatch" "$W/shards.sbatch" | grep -c '^[<>]')
e=$(diff "$TMP/readme.submit" "$TMP/submit.sh" | grep -c '^[<>]')
[ "$d" -eq 2 ] && [ "$e" -eq 2 ] && ok "the script and the submit lines are the README's but for the folder and the sizes" ||
	not_ok "the test's copies differ from the README in $d and $e lines"
head -n 1 "$W/shards.sbatch" | grep -q '^#!' && ok "shards.sbatch starts with #! (sbatch needs it)" ||
	not_ok "shards.sbatch has no #! line"
ln -s "$PROXIMA" "$W/proxima"

# ---- submit from the work folder, as the README does, then wait for both jobs
export TMPDIR="$W/tmp" # the nodes' local disk of the README, inside $TMP
cd "$W" || exit 1
jid=""
eval "$(cat "$TMP/submit.sh")" >"$TMP/submit.out" 2>"$TMP/submit.err"
rc=$?
mid=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$TMP/submit.out")
[ "$rc" -eq 0 ] && [ -n "$jid" ] && [ -n "$mid" ] &&
	ok "sbatch took the array (job $jid) and the merge (job $mid)" ||
	fail_here "the README's submit lines failed (exit $rc, array '$jid', merge '$mid')" \
		"$TMP/submit.out" "$TMP/submit.err"
s=$(scontrol -o show job "$mid" | sed -n 's/.* Dependency=\([^ ]*\).*/\1/p')
expect_match "^afterok:${jid}_\\*" "$s" "the merge waits on every task of the array ($s)"
wait_jobs() { # wait until no job is left in the queue, at most $1 s; 1 when one never can run
	i=0
	while [ -n "$(squeue -h -o %i)" ]; do
		squeue -h -o %r | grep -q DependencyNeverSatisfied && return 1
		i=$((i + 1))
		[ "$i" -ge $(($1 * 2)) ] && return 1
		sleep 0.5
	done
	return 0
}
wait_jobs 240
rc=$?
[ "$rc" -eq 0 ] && ok "both jobs left the queue" ||
	not_ok "jobs still queued: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
# every array task and the merge: COMPLETED with exit 0
states=$(scontrol -o show job "$jid" | sed -n 's/.* ArrayTaskId=\([0-9]*\) .* JobState=\([A-Z_]*\) .* ExitCode=\([0-9:]*\) .*/\1 \2 \3/p' | sort -n | tr '\n' ',')
[ "$states" = "0 COMPLETED 0:0,1 COMPLETED 0:0,2 COMPLETED 0:0,3 COMPLETED 0:0," ] &&
	ok "the four array tasks completed with exit 0" || {
	not_ok "array tasks: $states"
	for f in slurm-"$jid"_*.out; do
		[ -f "$f" ] && sed "s|^|# $f: |" "$f" | tail -n 5
	done
}
s=$(scontrol -o show job "$mid" | sed -n 's/.* JobState=\([A-Z_]*\) .* ExitCode=\([0-9:]*\) .*/\1 \2/p')
[ "$s" = "COMPLETED 0:0" ] && ok "the merge job completed with exit 0" || {
	not_ok "the merge job is '$s'"
	[ -f "slurm-$mid.out" ] && sed 's/^/# /' "slurm-$mid.out" | tail -n 10
}
[ -f "slurm-$mid.out" ] && sed 's/^/# merge job: /' "slurm-$mid.out"
expect_match '^merged 4 stores into qa\.db: ' "$(cat "slurm-$mid.out" 2>/dev/null)" \
	"the merge job's output says it merged the four shard stores"
expect_match 'integrity_check ok$' "$(cat "slurm-$mid.out" 2>/dev/null)" "and that qa.db passed integrity_check"
ls "$W/tmp"/qa-*.db >/dev/null 2>&1 && ok "the tasks wrote their stores under \$TMPDIR" ||
	not_ok "no qa-*.db under the tasks' TMPDIR $W/tmp"

# ---- each shard store holds the recordings its hash names, run with its shard and 1 CPU
q() { sqlite3 -readonly "$@"; }
for i in 0 1 2 3; do
	f="shards/qa-$i.db"
	if [ ! -s "$f" ]; then
		not_ok "$f was copied to shards/"
		continue
	fi
	want=$(for id in $ids; do [ "$(shard_of "$id")" = "$i" ] && echo "$id"; done | sort | tr '\n' ' ')
	got=$(q "$f" "select id from recordings order by id" | tr '\n' ' ')
	[ "$got" = "$want" ] && ok "$f holds shard $i's recordings: $got" ||
		not_ok "$f holds '$got', wanted '$want'"
	s=$(q "$f" "select json_extract(config_json, '\$.shard') || ' ' || json_extract(config_json, '\$.jobs') from runs")
	[ "$s" = "$i/4 1" ] && ok "$f: its run says shard $i/4, --jobs 1 (SLURM_CPUS_PER_TASK)" ||
		not_ok "$f: its run says '$s'"
done

# ---- one unsharded run over the same recordings, on both cores (the tasks had
# one each: the stores must not depend on --jobs)
expect_status 0 "one machine: generate over all six recordings, --jobs 2" ./proxima generate \
	"$W"/recordings/* --db single.db --quiet --jobs 2
[ -s qa.db ] || fail_here "the merge left no qa.db in the submit folder" "slurm-$mid.out"
nu=$(q single.db "select count(*) from qa")
nm=$(q qa.db "select count(*) from qa")
[ "$nu" -gt 100 ] && [ "$nm" -eq "$nu" ] && ok "as many QAs merged as in one run ($nu)" ||
	not_ok "$nm QAs merged, $nu in one run"
s=$(q qa.db "select group_concat(json_extract(config_json, '\$.shard'), ',') from (select * from runs order by id)")
[ "$s" = "0/4,1/4,2/4,3/4" ] && ok "qa.db has the four shard runs" || not_ok "qa.db's runs are '$s'"
q single.db "select id from qa order by id" >"$TMP/ids.u"
q qa.db "select id from qa order by id" >"$TMP/ids.m"
cmp -s "$TMP/ids.u" "$TMP/ids.m" && ok "the same QA ids" || not_ok "the QA ids differ"
# every column but the run id and the times
cols="id, recording_id, category, subtask, metric, t_ns, clip_start_ns, clip_end_ns, frames_json,
	target, question, question_edited, options_json, answer_index, answer_json, gt_json, qc_json,
	status, drop_reason"
q single.db "select $cols from qa order by id" >"$TMP/qa.u"
q qa.db "select $cols from qa order by id" >"$TMP/qa.m"
cmp -s "$TMP/qa.u" "$TMP/qa.m" &&
	ok "the same questions, options, answer keys, answers, truth and QC, row for row" ||
	not_ok "the QA rows differ: $(diff "$TMP/qa.u" "$TMP/qa.m" | head -n 2 | cut -c1-200)"
# the recordings, the dropped candidates and the traces, less run ids and times
for t in recordings drops traces; do
	case $t in
	recordings) c="select id, layout, root, t0_ns, t1_ns, summary_json from recordings order by id" ;;
	drops) c="select recording_id, category, subtask, metric, reason, t_ns, target from drops order by 1, 2, 3, 4, 5, 6, 7" ;;
	traces) c="select qa_id, trace_json from traces order by qa_id" ;;
	esac
	q single.db "$c" >"$TMP/$t.u"
	q qa.db "$c" >"$TMP/$t.m"
	[ -s "$TMP/$t.u" ] && cmp -s "$TMP/$t.u" "$TMP/$t.m" && ok "the same $t ($(wc -l <"$TMP/$t.u") rows)" ||
		not_ok "the $t differ"
done
# the jsonl export of both, less run ids and times
strip() { sed 's/"run_id":[0-9]*,//; s/,"created_at":"[^"]*","updated_at":"[^"]*"//' "$1" | sort; }
expect_status 0 "export the one-machine store as jsonl" ./proxima export --db single.db --format jsonl \
	--status pending -o "$TMP/x.u"
expect_status 0 "export the merged store as jsonl" ./proxima export --db qa.db --format jsonl \
	--status pending -o "$TMP/x.m"
strip "$TMP/x.u/records.jsonl" >"$TMP/j.u"
strip "$TMP/x.m/records.jsonl" >"$TMP/j.m"
n=$(grep -c -e '"run_id"' -e '"created_at"' -e '"updated_at"' "$TMP/j.u" "$TMP/j.m" | awk -F: '{ s += $2 } END { print s }')
[ "$(wc -l <"$TMP/j.u")" -eq "$nu" ] && [ "$n" -eq 0 ] &&
	ok "the exports list $nu records, run ids and times taken out" ||
	not_ok "the export has $(wc -l <"$TMP/j.u") records, $n still with a run id or a time"
cmp -s "$TMP/j.u" "$TMP/j.m" && ok "the two jsonl exports are equal less run ids and times" ||
	not_ok "the jsonl exports differ"
a=$(sed -n 's/.*"ids_sha256":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' "$TMP/x.u/manifest.json")
b=$(sed -n 's/.*"ids_sha256":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' "$TMP/x.m/manifest.json")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "and their manifests' ids_sha256 match" ||
	not_ok "manifest ids_sha256 '$a' and '$b'"

# ---- the README's rerun: one task requeued on its own, then the merge again
expect_status 0 "scontrol requeue ${jid}_1" scontrol requeue "${jid}_1"
# a requeued job waits before it starts again; start it now
scontrol update JobId="${jid}_1" StartTime=now >/dev/null 2>&1
wait_jobs 120
s=$(scontrol -o show job "${jid}_1" | sed -n 's/.* JobState=\([A-Z_]*\) .* Restarts=\([0-9]*\) .* ExitCode=\([0-9:]*\) .*/\1 \2 \3/p')
[ "$s" = "COMPLETED 1 0:0" ] && ok "task 1 ran again and completed" || not_ok "task 1 is '$s'"
s=$(q shards/qa-1.db "select group_concat(json_extract(config_json, '\$.shard'), ',') from (select * from runs order by id)")
[ "$s" = "1/4,1/4" ] && ok "the rerun kept its index and the array's count (shard 1/4)" ||
	not_ok "the rerun's store has runs '$s'"
expect_status 0 "merge again" ./proxima merge --db qa.db shards/qa-*.db
expect_match "^merged 4 stores into qa\\.db: 0 QAs added, 0 replaced, $nu kept" "$OUT" \
	"merging again adds and replaces nothing"
q qa.db "select $cols from qa order by id" >"$TMP/qa.m2"
cmp -s "$TMP/qa.u" "$TMP/qa.m2" && ok "qa.db still equals the one-machine run" ||
	not_ok "qa.db changed after the rerun"
cd "$TMP" || exit 1

# ---- stop everything and check that nothing is left running
stop_all
left=""
for p in $munged_pid $ctld_pid $slurmd_pid; do alive "$p" && left="$left $p"; done
[ -z "$left" ] && ok "munged, slurmctld and slurmd have exited" || not_ok "still running:$left"
job_pids
[ -z "$pids" ] && ok "no job process is left" || not_ok "job processes left:$pids"
[ ! -e "$R/munge.sock" ] && ok "munged removed its socket" || not_ok "the munge socket is still there"

done_testing
