# Sourced (bash): stamp_lines prefixes each line of standard input with the
# time it arrived (seconds since the epoch, microseconds), so that a test's
# log tells when each line came, relative to a fault it injected.
stamp_lines() {
    local line
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
}
