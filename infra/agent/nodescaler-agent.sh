#!/bin/sh
# nodescaler stats agent: sends ONE node-stats message for this node host to
# the nodescaler stats queue, then exits. Run every 60 s by
# nodescaler-agent.timer (or cron). See infra/agent/README.md.
#
# It reports on change: a run whose figures equal the last ones sent, less
# than NODESCALER_HEARTBEAT seconds (240, inside the evaluator's statsMaxAge
# of 5 minutes) ago, sends nothing. Most minutes change nothing, and each
# message costs an SQS request, a Lambda share and a DynamoDB write: about
# 4x fewer of them at the same freshness. The last report sent is kept in
# NODESCALER_STATE_FILE (/var/lib/nodescaler/agent.last); losing it only
# means the next run sends.
#
# Why POSIX sh: the node hosts already have sh, coreutils, curl and the AWS
# CLI; a shell script adds no runtime (no Node on the hosts), is small enough
# to embed in the EC2 user data, and an operator can read it whole.
#
# Facts: /etc/nodescaler/agent.env (written by the user data) gives
# NODESCALER_DISTRICT, NODESCALER_PROFILE, NODESCALER_STATS_QUEUE_URL,
# AWS_REGION, optionally NODESCALER_NODE_ID (else the IMDS host name),
# GEAR_BASE_DIR (/var/lib/openshift), RESOURCE_LIMITS
# (/etc/openshift/resource_limits.conf) and IMDS_ENDPOINT
# (http://169.254.169.254). Active gears are the gear directories (32 hex
# characters) under GEAR_BASE_DIR whose app-root/runtime/.state is not
# `stopped` or `idle` (a gear without a state file counts as active).
# Of those, disruptiveGears are head gears and gears of unscaled apps
# (.env/OPENSHIFT_GEAR_DNS equals OPENSHIFT_APP_DNS, or either is unreadable):
# moving one restarts the tenant; the others are siblings behind a scaled
# app's haproxy. The gear list (every gear, idle and stopped too, up to 500:
# the evaluator keeps no longer list) marks each disruptive gear (its move
# is a tenant's restart, counted as TenantRestarts), marks each stopped or
# idled gear idle (max_active_gears counts only active gears, so its move
# takes no slot on the target), and carries doNotMove for a gear whose
# directory holds a .nodescaler-do-not-move file owned by this agent's user
# (root; the gear's user cannot write its home's top level).
#
# A missing or unreadable fact sends NO message: one log line, exit 1.
# Sending is tried 3 times (2 s, then 4 s apart), each try capped at 12 s,
# so one run ends within about 50 s.
set -u

log() {
  echo "nodescaler-agent: $*" >&2
  if [ "${NODESCALER_SYSLOG:-1}" != 0 ] && command -v logger >/dev/null 2>&1; then
    logger -t nodescaler-agent -- "$*" 2>/dev/null || :
  fi
  return 0
}
fail() {
  log "$*; no stats sent"
  exit 1
}

ENV_FILE=${NODESCALER_AGENT_ENV:-/etc/nodescaler/agent.env}
[ -r "$ENV_FILE" ] || fail "cannot read $ENV_FILE"
# shellcheck disable=SC1090
. "$ENV_FILE" || fail "cannot load $ENV_FILE"

: "${GEAR_BASE_DIR:=/var/lib/openshift}"
: "${RESOURCE_LIMITS:=/etc/openshift/resource_limits.conf}"
: "${IMDS_ENDPOINT:=http://169.254.169.254}"
: "${NODESCALER_RETRY_DELAY:=2}"
: "${NODESCALER_HEARTBEAT:=240}"
: "${NODESCALER_STATE_FILE:=/var/lib/nodescaler/agent.last}"
case $NODESCALER_HEARTBEAT in '' | *[!0-9]*) fail "NODESCALER_HEARTBEAT '$NODESCALER_HEARTBEAT' is not a number of seconds" ;; esac

# Values go into JSON unescaped, so they must be plain names.
plain() {
  case $2 in
    '' ) fail "$1 is not set" ;;
    *[!A-Za-z0-9._-]* ) fail "$1 '$2' is not a plain name" ;;
  esac
}
plain NODESCALER_DISTRICT "${NODESCALER_DISTRICT:-}"
plain NODESCALER_PROFILE "${NODESCALER_PROFILE:-}"
[ -n "${NODESCALER_STATS_QUEUE_URL:-}" ] || fail "NODESCALER_STATS_QUEUE_URL is not set"
[ -n "${AWS_REGION:-}" ] || fail "AWS_REGION is not set"

# Instance metadata, IMDSv2: a session token first, then GETs carrying it.
# curl stays quiet (-s without -S): the one log line carries its exit code.
token=$(curl -fs -m 2 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' "$IMDS_ENDPOINT/latest/api/token") ||
  fail "no IMDSv2 token from $IMDS_ENDPOINT (curl exit $?)"
imds() {
  curl -fs -m 2 -H "X-aws-ec2-metadata-token: $token" "$IMDS_ENDPOINT/latest/meta-data/$1"
}
instance_id=$(imds instance-id) || fail "no instance-id from the instance metadata service (curl exit $?)"
case $instance_id in
  i-*) case ${instance_id#i-} in '' | *[!0-9a-f]*) fail "instance-id '$instance_id' is not an instance id" ;; esac ;;
  *) fail "instance-id '$instance_id' is not an instance id" ;;
esac
if [ -n "${NODESCALER_NODE_ID:-}" ]; then
  node_id=$NODESCALER_NODE_ID
else
  node_id=$(imds hostname) || fail "no hostname from the instance metadata service (curl exit $?)"
  node_id=$(printf '%s' "$node_id" | tr 'A-Z' 'a-z')
fi
case $node_id in
  '' | *[!a-z0-9._-]*) fail "node id '$node_id' is not a host name" ;;
esac

# Capacity: max_active_gears from resource_limits.conf (last assignment wins).
[ -r "$RESOURCE_LIMITS" ] || fail "cannot read $RESOURCE_LIMITS"
max_active=$(sed -n 's/^[[:space:]]*max_active_gears[[:space:]]*=[[:space:]]*"\{0,1\}\([^"#[:space:]]*\)"\{0,1\}.*$/\1/p' "$RESOURCE_LIMITS" | tail -n 1)
case $max_active in
  '' | 0* | *[!0-9]*) fail "max_active_gears '$max_active' in $RESOURCE_LIMITS is not a positive integer" ;;
esac
[ "${#max_active}" -le 4 ] && [ "$max_active" -le 6000 ] ||
  fail "max_active_gears $max_active in $RESOURCE_LIMITS is above 6000"

# Active gears: gear directories whose state is not stopped or idle.
[ -d "$GEAR_BASE_DIR" ] && [ -r "$GEAR_BASE_DIR" ] && [ -x "$GEAR_BASE_DIR" ] ||
  fail "cannot read the gear directory $GEAR_BASE_DIR"
# A gear's size is its node's profile. Values from a gear's .env go into
# JSON, so only plain names are listed.
first_line() {
  line=
  [ -f "$1" ] && [ ! -L "$1" ] && [ -r "$1" ] || return 1
  { IFS= read -r line || [ -n "$line" ]; } 2>/dev/null <"$1"
}
MAX_LISTED=500
active=0
disruptive=0
listed=0
gear_list=
list_problem=
for gear in "$GEAR_BASE_DIR"/*; do
  [ -d "$gear" ] && [ ! -L "$gear" ] || continue
  name=${gear##*/}
  case $name in *[!0-9a-f]*) continue ;; esac
  [ "${#name}" -eq 32 ] || continue
  state_file=$gear/app-root/runtime/.state
  state=started
  if [ -e "$state_file" ]; then
    [ -r "$state_file" ] || fail "cannot read $state_file"
    state=$(tr -d '[:space:]' <"$state_file") || fail "cannot read $state_file"
  fi
  head=0
  idle=0
  case $state in
    stopped | idle) idle=1 ;;
    *)
      active=$((active + 1))
      head=1
      if first_line "$gear/.env/OPENSHIFT_GEAR_DNS"; then
        gear_dns=$line
        first_line "$gear/.env/OPENSHIFT_APP_DNS" && [ -n "$line" ] && [ -n "$gear_dns" ] && [ "$line" != "$gear_dns" ] && head=0
      fi
      disruptive=$((disruptive + head))
      ;;
  esac
  [ -z "$list_problem" ] || continue
  listed=$((listed + 1))
  [ "$listed" -le "$MAX_LISTED" ] || { list_problem="more than $MAX_LISTED gears"; continue; }
  first_line "$gear/.env/OPENSHIFT_APP_NAME" || { list_problem="no readable .env/OPENSHIFT_APP_NAME in $gear"; continue; }
  case $line in
    '' | *[!A-Za-z0-9._-]*) list_problem="application name of $name is not a plain name"; continue ;;
  esac
  [ "${#line}" -le 32 ] || { list_problem="application name of $name is longer than 32"; continue; }
  flag=
  marker=$gear/.nodescaler-do-not-move
  [ -f "$marker" ] && [ ! -L "$marker" ] && [ -O "$marker" ] && flag=',"doNotMove":true'
  [ "$head" = 1 ] && flag="$flag,\"disruptive\":true"
  [ "$idle" = 1 ] && flag="$flag,\"idle\":true"
  gear_list="$gear_list${gear_list:+,}{\"uuid\":\"$name\",\"app\":\"$line\",\"size\":\"$NODESCALER_PROFILE\"$flag}"
done
figures="\"activeGears\":$active,\"maxActiveGears\":$max_active,\"disruptiveGears\":$disruptive"
# Without the list the evaluator asks the platform for a candidate's gears: one log line, stats still sent.
if [ -n "$list_problem" ]; then
  log "gear list left out: $list_problem"
else
  figures="$figures,\"gears\":[$gear_list]"
fi
sum=$(printf '%s' "$figures" | cksum) || fail "no cksum"
sum=${sum%% *}

now=$(date -u +%s) || fail "no time"
reported_at=$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$now" +%Y-%m-%dT%H:%M:%SZ) || fail "no time"

# Unchanged since the last report sent, and that one is recent: nothing to send.
if [ -r "$NODESCALER_STATE_FILE" ]; then
  read -r last_active last_max last_at last_sum <"$NODESCALER_STATE_FILE" 2>/dev/null || :
  case "${last_active:-x}${last_max:-x}${last_at:-x}${last_sum:-x}" in
    *[!0-9]*) ;;
    *)
      if [ "$last_active" = "$active" ] && [ "$last_max" = "$max_active" ] && [ "$last_sum" = "$sum" ] &&
        [ "$now" -ge "$last_at" ] && [ $((now - last_at)) -lt "$NODESCALER_HEARTBEAT" ]; then
        exit 0
      fi
      ;;
  esac
fi
body=$(printf '{"type":"node-stats","v":1,"nodeId":"%s","district":"%s","profile":"%s",%s,"reportedAt":"%s"}' \
  "$node_id" "$NODESCALER_DISTRICT" "$NODESCALER_PROFILE" "$figures" "$reported_at")

# One CLI attempt per try (the CLI's own retries would stretch the run).
AWS_MAX_ATTEMPTS=1
export AWS_MAX_ATTEMPTS AWS_REGION
attempt=1
delay=$NODESCALER_RETRY_DELAY
while :; do
  if error=$(timeout 12 aws sqs send-message --region "$AWS_REGION" \
    --queue-url "$NODESCALER_STATS_QUEUE_URL" --message-body "$body" \
    --message-attributes "instanceId={DataType=String,StringValue=$instance_id}" \
    --cli-connect-timeout 5 --cli-read-timeout 5 2>&1 >/dev/null); then
    # Remember what was sent; if that fails, the next run simply sends again.
    state_dir=$(dirname "$NODESCALER_STATE_FILE")
    { mkdir -p "$state_dir" && printf '%s %s %s %s\n' "$active" "$max_active" "$now" "$sum" >"$NODESCALER_STATE_FILE.tmp" &&
      mv -f "$NODESCALER_STATE_FILE.tmp" "$NODESCALER_STATE_FILE"; } 2>/dev/null ||
      log "cannot write $NODESCALER_STATE_FILE; the next run sends again"
    exit 0
  fi
  if [ "$attempt" -ge 3 ]; then
    fail "aws sqs send-message failed $attempt times (last: $(printf '%s' "$error" | tr '\n' ' ' | cut -c1-200))"
  fi
  sleep "$delay"
  delay=$((delay * 2))
  attempt=$((attempt + 1))
done
