#!/bin/sh
# nodescaler broker reporter: runs on the OpenShift broker host and sends ONE
# gears-refused message to the nodescaler stats queue: how many gear
# creations the broker refused for lack of capacity since its last run. Run
# every 15 s by nodescaler-broker-reporter.timer. See infra/agent/README.md.
#
# Why: no node reports a gear its district refused, so a full pool's demand
# is a lower bound; the broker is the one place that sees them (OpenShift
# v2's pending pods). origin-server raises NodeUnavailableException ("No
# nodes available", "... for the specified gear size", "... within the
# specified district"; exit code 140) when no node of any district of the
# gear size has room, and its REST layer writes one line for the request to
# the user action log (OpenShift::UserActionLog, USER_ACTION_LOG_FILE in
# /etc/openshift/broker.conf, default /var/log/openshift/broker/user_action.log):
#   RESULT=FAILURE STATUS=internal_server_error TIMESTAMP=... ACTION=ADD_APPLICATION
#   REQ_ID=... USER_ID=... LOGIN=... [APP_UUID=...] DOMAIN=... Unable to complete
#   the requested operation due to: No nodes available for the specified gear size. ...
# (ACTION=SCALE_UP for an auto-scaling haproxy's scale-up event). This script
# reads the lines appended since its last run (a byte offset, kept with the
# file's inode in NODESCALER_STATE_FILE; a rotated or truncated log is read
# from its start) and counts the distinct refused requests: a client that
# retries within one window counts once (ACTION and APP_UUID, or ACTION,
# LOGIN and DOMAIN for an application not created yet). One request is
# counted as one gear: a lower bound, as the nodes' own figures are. A
# broker that requires zones for app creation words it "... for the
# specified gear size/zone combination"; the message then says
# "zonesRequired":true, since a node added in no zone takes no gear there
# (the evaluator buys none for them unless the pool names its region).
#
# The log line names neither the gear size nor the district. The profile is
# NODESCALER_PROFILE, else the broker's only gear size (VALID_GEAR_SIZES with
# one entry); a broker with several sizes and no NODESCALER_PROFILE sends
# nothing (one log line, exit 1: never a guessed number). NODESCALER_DISTRICT
# names the district when the site runs one district per profile; without it
# the message names none and the evaluator shares the count among the pools
# of the profile (each was full, or the broker would have placed the gear).
#
# Why a script on the broker host, not an SSM query like report-stats: the
# count needs every line once, in order, within seconds; a query run by
# Run Command every 15 s would cost an SSM invocation each time, see output
# cut at 24,000 characters, and keep no offset between runs. The broker host
# already has sh, awk and the AWS CLI (report-stats' instance profile);
# its role id is in statsAuth.reporterIds, the only senders whose
# gears-refused the evaluator believes.
#
# It sends nothing for a quiet window, except the first one after a refusal
# (refused: 0, so the evaluator knows the gears stopped waiting). A missing
# fact sends NO message: one log line, exit 1, the offset kept (the next run
# counts these lines again). Sending is tried 3 times (2 s, then 4 s apart).
#
# District UIDs: the broker refuses a gear with the same "No nodes available"
# when its district has no UID left (origin-server's District keeps
# max_capacity UIDs, 6000 by default; every gear holds one, stopped or idle
# too), and no node added cures that. So every NODESCALER_DISTRICT_EVERY
# seconds (300; 0: never) the run ends by reading `oo-admin-ctl-district -c
# list` (a Rails start, some seconds, after the refusals are sent) and
# sends one district-capacity message per district: its name, gear size,
# max_capacity and available_capacity. The evaluator counts no more refusals
# than a district has UIDs left. A failed read logs one line and is tried
# again NODESCALER_DISTRICT_EVERY later; it never holds back the refusals.
set -u

log() {
  echo "nodescaler-broker-reporter: $*" >&2
  if [ "${NODESCALER_SYSLOG:-1}" != 0 ] && command -v logger >/dev/null 2>&1; then
    logger -t nodescaler-broker-reporter -- "$*" 2>/dev/null || :
  fi
  return 0
}
fail() {
  log "$*; nothing sent"
  exit 1
}

ENV_FILE=${NODESCALER_REPORTER_ENV:-/etc/nodescaler/broker-reporter.env}
[ -r "$ENV_FILE" ] || fail "cannot read $ENV_FILE"
# shellcheck disable=SC1090
. "$ENV_FILE" || fail "cannot load $ENV_FILE"

: "${BROKER_CONF:=/etc/openshift/broker.conf}"
: "${NODESCALER_RETRY_DELAY:=2}"
: "${NODESCALER_STATE_FILE:=/var/lib/nodescaler/broker-reporter.last}"
[ -n "${NODESCALER_STATS_QUEUE_URL:-}" ] || fail "NODESCALER_STATS_QUEUE_URL is not set"
[ -n "${AWS_REGION:-}" ] || fail "AWS_REGION is not set"
: "${NODESCALER_DISTRICT_EVERY:=300}"
case $NODESCALER_DISTRICT_EVERY in '' | *[!0-9]*) fail "NODESCALER_DISTRICT_EVERY '$NODESCALER_DISTRICT_EVERY' is not a number of seconds" ;; esac

iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$1" +%Y-%m-%dT%H:%M:%SZ; }

# One message to the stats queue, tried 3 times; the last error in $error.
AWS_MAX_ATTEMPTS=1
export AWS_MAX_ATTEMPTS AWS_REGION
send_body() {
  attempt=1
  delay=$NODESCALER_RETRY_DELAY
  while :; do
    if error=$(timeout 4 aws sqs send-message --region "$AWS_REGION" \
      --queue-url "$NODESCALER_STATS_QUEUE_URL" --message-body "$1" \
      --cli-connect-timeout 2 --cli-read-timeout 2 2>&1 >/dev/null); then
      return 0
    fi
    [ "$attempt" -lt 3 ] || return 1
    sleep "$delay"
    delay=$((delay * 2))
    attempt=$((attempt + 1))
  done
}

# The districts' UIDs, when due (see the header). Never fails the run.
report_districts() {
  [ "$NODESCALER_DISTRICT_EVERY" -gt 0 ] || return 0
  stamp_file=$NODESCALER_STATE_FILE.districts
  last_read=0
  [ -r "$stamp_file" ] && read -r last_read <"$stamp_file" 2>/dev/null
  case $last_read in '' | *[!0-9]*) last_read=0 ;; esac
  read_now=$(date -u +%s) || return 0
  [ "$read_now" -ge "$last_read" ] && [ $((read_now - last_read)) -lt "$NODESCALER_DISTRICT_EVERY" ] && return 0
  # An attempt counts, failed or not: a broker whose database is down is not asked every 15 s.
  printf '%s\n' "$read_now" >"$stamp_file.tmp" 2>/dev/null && mv -f "$stamp_file.tmp" "$stamp_file" 2>/dev/null ||
    log "cannot write $stamp_file"
  if ! listing=$(timeout 120 oo-admin-ctl-district -c list 2>&1); then
    log "oo-admin-ctl-district -c list failed: $(printf '%s' "$listing" | tr '\n' ' ' | cut -c1-200); no district read sent"
    return 0
  fi
  read_at=$(iso "$read_now") || return 0
  # One JSON body per district dump: its top-level keys sit at the start of a
  # line (pretty_inspect), its servers' hashes deeper; only plain names and
  # numbers are sent, anything else is counted and left out.
  bodies=$(printf '%s\n' "$listing" | awk -v at="$read_at" '
    function take(line) { sub(/^[^>]*>/, "", line); sub(/[,}]+$/, "", line); gsub(/"/, "", line); return line }
    function flush() {
      if (seen) {
        if (name ~ /^[A-Za-z0-9._-]+$/ && size ~ /^[A-Za-z0-9._-]+$/ && max ~ /^[0-9]+$/ && avail ~ /^[0-9]+$/ && length(max) <= 7 && length(avail) <= 7)
          printf "{\"type\":\"district-capacity\",\"v\":1,\"district\":\"%s\",\"profile\":\"%s\",\"maxCapacity\":%s,\"availableCapacity\":%s,\"readAt\":\"%s\"}\n", name, size, max, avail, at
        else print "skipped"
      }
      seen = 0; name = ""; size = ""; max = ""; avail = ""
    }
    /^\{"_id"=>/ { flush(); seen = 1 }
    /^ ?"name"=>/ { name = take($0) }
    /^ ?"gear_size"=>/ { size = take($0) }
    /^ ?"max_capacity"=>/ { max = take($0) }
    /^ ?"available_capacity"=>/ { avail = take($0) }
    END { flush() }')
  skipped=0
  sent=0
  for body in $bodies; do
    if [ "$body" = skipped ]; then
      skipped=$((skipped + 1))
      continue
    fi
    send_body "$body" || { log "aws sqs send-message failed for a district read (last: $(printf '%s' "$error" | tr '\n' ' ' | cut -c1-200))"; return 0; }
    sent=$((sent + 1))
  done
  [ "$skipped" -eq 0 ] || log "$skipped district(s) in the listing without a plain name, gear size, max_capacity and available_capacity: left out"
  [ "$sent" -gt 0 ] || [ "$skipped" -gt 0 ] || log "oo-admin-ctl-district -c list listed no district"
  return 0
}
finish() {
  report_districts
  exit 0
}

# A value of broker.conf (KEY="value"; the last assignment wins).
conf() {
  [ -r "$BROKER_CONF" ] || return 0
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\"\{0,1\}\([^\"#]*\)\"\{0,1\}.*\$/\1/p" "$BROKER_CONF" | tail -n 1
}
log_file=${USER_ACTION_LOG:-$(conf USER_ACTION_LOG_FILE)}
: "${log_file:=/var/log/openshift/broker/user_action.log}"

profile=${NODESCALER_PROFILE:-}
if [ -z "$profile" ]; then
  sizes=$(conf VALID_GEAR_SIZES)
  case $sizes in
    '') fail "NODESCALER_PROFILE is not set and $BROKER_CONF names no VALID_GEAR_SIZES" ;;
    *,*) fail "the broker has several gear sizes ($sizes) and its log does not say which one was refused: set NODESCALER_PROFILE" ;;
  esac
  profile=$sizes
fi
# Values go into JSON unescaped, so they must be plain names.
case $profile in '' | *[!A-Za-z0-9._-]*) fail "profile '$profile' is not a plain name" ;; esac
district_field=
if [ -n "${NODESCALER_DISTRICT:-}" ]; then
  case $NODESCALER_DISTRICT in *[!A-Za-z0-9._-]*) fail "NODESCALER_DISTRICT '$NODESCALER_DISTRICT' is not a plain name" ;; esac
  district_field="\"district\":\"$NODESCALER_DISTRICT\","
fi

[ -f "$log_file" ] && [ -r "$log_file" ] || fail "cannot read the user action log $log_file"
# ls -i and wc -c: POSIX, unlike stat's options.
inode=$(ls -di "$log_file" 2>/dev/null | awk '{print $1}') || fail "cannot stat $log_file"
size=$(wc -c <"$log_file" | tr -d '[:space:]') || fail "cannot size $log_file"
case "$inode$size" in '' | *[!0-9]*) fail "cannot stat $log_file" ;; esac
now=$(date -u +%s) || fail "no time"

last_inode= last_offset= last_at= last_sent=
if [ -r "$NODESCALER_STATE_FILE" ]; then
  read -r last_inode last_offset last_at last_sent <"$NODESCALER_STATE_FILE" 2>/dev/null || :
fi
save() {
  state_dir=$(dirname "$NODESCALER_STATE_FILE")
  { mkdir -p "$state_dir" && printf '%s %s %s %s\n' "$inode" "$size" "$now" "$1" >"$NODESCALER_STATE_FILE.tmp" &&
    mv -f "$NODESCALER_STATE_FILE.tmp" "$NODESCALER_STATE_FILE"; } 2>/dev/null ||
    log "cannot write $NODESCALER_STATE_FILE"
}
case "${last_inode:-x}${last_offset:-x}${last_at:-x}${last_sent:-x}" in
  *[!0-9]*)
    # First run (or a damaged state file): start at the end; what was refused before is history.
    save 0
    finish
    ;;
esac
offset=$last_offset
if [ "$inode" != "$last_inode" ] || [ "$size" -lt "$last_offset" ]; then
  offset=0 # rotated or truncated: the new file from its start
fi

# Distinct refused requests among the lines appended since the offset, and how many of them asked for a
# node in a zone ("gear size/zone combination": the broker requires zones for app creation).
counts=$(tail -c +"$((offset + 1))" "$log_file" | head -c "$((size - offset))" | awk '
  /RESULT=FAILURE/ && /No nodes available/ {
    action = ""; app = ""; login = ""; domain = ""
    for (i = 1; i <= NF; i++) {
      if ($i ~ /^ACTION=/) action = substr($i, 8)
      else if ($i ~ /^APP_UUID=/) app = substr($i, 10)
      else if ($i ~ /^LOGIN=/) login = substr($i, 7)
      else if ($i ~ /^DOMAIN=/) domain = substr($i, 8)
    }
    key = (app != "") ? action " " app : action " " login " " domain
    if (!(key in seen)) { seen[key] = 1; n++; if (/zone combination/) z++ }
  }
  END { print n + 0, z + 0 }') || fail "cannot read $log_file"
refused=${counts%% *}
zoned=${counts##* }
case $refused$zoned in '' | *[!0-9]*) fail "cannot count the refusals in $log_file" ;; esac
[ "${#refused}" -le 6 ] && [ "$refused" -le 100000 ] || refused=100000 # the message's limit

if [ "$refused" -eq 0 ] && [ "$last_sent" -eq 0 ]; then
  save 0
  finish
fi
start=$last_at
# The message covers at most an hour (a reporter that was down counts its backlog as the last hour's).
[ "$start" -lt "$now" ] && [ $((now - start)) -le 3600 ] || start=$((now - 60))
window_start=$(iso "$start") || fail "no time"
window_end=$(iso "$now") || fail "no time"
# Only when some refusal asked for a zone, so an evaluator older than the field reads every other report.
zones_field=''
[ "$zoned" -gt 0 ] && zones_field=',"zonesRequired":true'
body=$(printf '{"type":"gears-refused","v":1,%s"profile":"%s","refused":%s,"windowStart":"%s","windowEnd":"%s"%s}' \
  "$district_field" "$profile" "$refused" "$window_start" "$window_end" "$zones_field")

send_body "$body" || fail "aws sqs send-message failed 3 times (last: $(printf '%s' "$error" | tr '\n' ' ' | cut -c1-200))"
save "$refused"
finish
