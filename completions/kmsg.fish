# fish completion for kmsg(1)
#
# Static on purpose: completing runs no program.  tests/cli/completions.sh
# checks that each subcommand's options here are exactly what
# "kmsg options CMD" prints (plus --help), that the subcommands are those
# of "kmsg --help", and that the value lists are those kmsg accepts; so when
# an option changes in cmd/*.c, change it here too.

# __kmsg_is CMD...: the subcommand on the line is one of CMD
function __kmsg_is
    set -l t (commandline -opc)
    test (count $t) -ge 2; and contains -- $t[2] $argv
end

function __kmsg_no_command
    test (count (commandline -opc)) -eq 1
end

set -g __kmsg_facilities kern user mail daemon auth syslog lpr news uucp cron \
    authpriv ftp local0 local1 local2 local3 local4 local5 local6 local7
set -g __kmsg_levels emerg alert crit err warn notice info debug

# -p: facility.level (kern is never stored: not offered) or a level alone
function __kmsg_priority
    set -l cur (commandline -ct)
    string replace -r -- '^(-p|--priority=)' '' "$cur" | read -l arg
    if string match -q -- '*.*' "$arg"
        set -l fac (string split -m1 . -- "$arg")[1]
        for l in $__kmsg_levels
            echo $fac.$l
        end
    else
        printf '%s.\n' (string match -v kern $__kmsg_facilities)
        printf '%s\n' $__kmsg_levels
    end
end

# __kmsg_list WORD...: the last item of a comma-separated list, with the
# WORDs not in it yet
function __kmsg_list
    set -l cur (commandline -ct)
    string replace -r -- '^(-[lf]|--level=|--facility=|--output-fields=)' '' "$cur" | read -l arg
    set -l head (string replace -r -- '[^,]*$' '' "$arg")
    set -l done (string split , -- "$head")
    for w in $argv
        contains -- $w $done; or echo $head$w
    end
end

complete -c kmsg -f

# kmsg with no subcommand yet
complete -c kmsg -n __kmsg_no_command -a emit -d "append messages to the log"
complete -c kmsg -n __kmsg_no_command -a read -d "print the log"
complete -c kmsg -n __kmsg_no_command -a follow -d "print the last records, then new ones"
complete -c kmsg -n __kmsg_no_command -a ship -d "forward the log's records to a collector"
complete -c kmsg -n __kmsg_no_command -a clear -d "mark everything so far as cleared"
complete -c kmsg -n __kmsg_no_command -a dump -d "write a compressed snapshot"
complete -c kmsg -n __kmsg_no_command -a stat -d "show the state of a log"
complete -c kmsg -n __kmsg_no_command -a listen -d "take syslog messages from a socket"
complete -c kmsg -n __kmsg_no_command -a kernel -d "copy the kernel's log into the log"
complete -c kmsg -n __kmsg_no_command -a help -d "a command's options, as --help"
complete -c kmsg -n __kmsg_no_command -a options -d "a command's options, one per line"
complete -c kmsg -n __kmsg_no_command -l help -d "list the commands"
complete -c kmsg -n __kmsg_no_command -l version -d "print the version"
complete -c kmsg -n '__kmsg_is help options' -a 'emit read follow ship clear dump stat listen kernel'

complete -c kmsg -n '__kmsg_is emit read follow ship clear dump stat listen kernel' -l help -d "show the options"
complete -c kmsg -n '__kmsg_is emit read follow ship clear dump stat listen kernel' -s F -l file -r -F -d "the log"

# kmsg emit
set -l c '__kmsg_is emit'
complete -c kmsg -n $c -s p -l priority -x -a '(__kmsg_priority)' -d "facility.level (default user.notice)"
complete -c kmsg -n $c -s t -l tag -x -d "prefix messages with TAG: "
complete -c kmsg -n $c -s i -d "add the PID to the tag"
complete -c kmsg -n $c -l id -d "add ID (--id=ID) or the PID to the tag"
complete -c kmsg -n $c -s f -l input -r -F -d "one message per line of FILE"
complete -c kmsg -n $c -s e -l skip-empty -d "do not write empty messages"
complete -c kmsg -n $c -s s -l stderr -d "echo messages to stderr"
complete -c kmsg -n $c -l prio-prefix -d "a leading <N> sets the priority"
complete -c kmsg -n $c -l field -x -d "attach KEY=VALUE"
complete -c kmsg -n $c -l split -d "write a long message in parts, joined when read"
complete -c kmsg -n $c -l log-size -x -d "size of a log made (default 1M)"
complete -c kmsg -n $c -l max-text -x -d "longest text of a log made (default 1024)"
complete -c kmsg -n $c -l sync -d "each message on stable storage"
complete -c kmsg -n $c -l no-newline -d "leave the line open"
complete -c kmsg -n $c -l cont -d "continue the line this script left open"
complete -c kmsg -n $c -l caller -x -d "who continues lines, instead of the script"

# kmsg read
set -l c '__kmsg_is read'
complete -c kmsg -n $c -s K -l kmsg-file -r -F -d "records in the /dev/kmsg format"
complete -c kmsg -n $c -s c -l read-clear -d "clear the records printed"
complete -c kmsg -n $c -s C -l clear -d "clear the log without printing it"
complete -c kmsg -n $c -s P -l nopager -d "no pager"
complete -c kmsg -n $c -s b -l boot -f -a '0 -1 -2 1' -d "only one boot's records (--boot=ID|OFFSET)"
complete -c kmsg -n $c -l list-boots -d "list the boots in the log"
complete -c kmsg -n $c -s n -l lines -x -a '10 20 50' -d "only the last N records"
complete -c kmsg -n $c -l reverse -d "newest records first"
complete -c kmsg -n $c -l list-values -x -a 'seq seq_id boot_id claimed_pid caller facility facility_name level level_name text _BOOT_ID SYSLOG_FACILITY PRIORITY MESSAGE SYSLOG_IDENTIFIER' -d "list the distinct values of a field or member"

# kmsg follow
set -l c '__kmsg_is follow'
complete -c kmsg -n $c -s n -l lines -x -a 'all 0 10' -d "first print the last N records"
complete -c kmsg -n $c -l fail-missing -d "fail at once if the log does not exist"

# kmsg ship
set -l c '__kmsg_is ship'
complete -c kmsg -n $c -l to -x -a 'tcp:// tls:// udp:// relp:// unix: http://' -d "the collector's URL"
complete -c kmsg -n $c -l format -x -a 'rfc5424 rfc3164' -d "the syslog format"
complete -c kmsg -n $c -l sd-id -x -d "the SD-ID (default kmsg@32473)"
complete -c kmsg -n $c -l hostname -x -d "the HOSTNAME sent"
complete -c kmsg -n $c -l window -x -d "records sent and not yet delivered, at most"
complete -c kmsg -n $c -l window-bytes -x -d "bytes of them, at most"
complete -c kmsg -n $c -l retry-max -x -d "the longest wait between attempts to connect"
complete -c kmsg -n $c -l from-end -d "with no cursor, ship only new records"
complete -c kmsg -n $c -l tls -d "relp:// over TLS"
complete -c kmsg -n $c -l tls-ca -r -F -d "certificates that may sign the collector's"
complete -c kmsg -n $c -l tls-cert -r -F -d "this sender's certificate"
complete -c kmsg -n $c -l tls-key -r -F -d "its private key"
complete -c kmsg -n $c -l tls-name -x -d "the name the collector's certificate must hold"

# the format and filter options of read, follow and ship (cmd/output.c)
set -l c '__kmsg_is read follow ship'
complete -c kmsg -n $c -s T -l ctime -d "wall-clock time stamps"
complete -c kmsg -n $c -s e -l reltime -d "local time and deltas"
complete -c kmsg -n $c -s d -l show-delta -d "time since the previous record"
complete -c kmsg -n $c -s t -l notime -d "no time stamps"
complete -c kmsg -n $c -l time-format -x -a 'delta reltime ctime notime iso raw' -d "time stamp format"
complete -c kmsg -n $c -s r -l raw -d "dmesg -r lines"
complete -c kmsg -n $c -s x -l decode -d "facility and level as names"
complete -c kmsg -n $c -s J -l json -d "JSON, as dmesg -J"
complete -c kmsg -n $c -s o -l output -x -a 'short raw json json-pretty json-seq kmsg export short-iso short-iso-precise short-precise short-monotonic short-unix cat' -d "output format"
complete -c kmsg -n $c -l utc -d "wall-clock times in UTC"
complete -c kmsg -n $c -l output-fields -x -a '(__kmsg_list seq seq_id time_ns time boot_ns boot_id claimed_pid caller facility facility_name level level_name text)' -d "only these keys in JSON records"
complete -c kmsg -n $c -l noescape -d "print unprintable bytes as they are"
complete -c kmsg -n $c -s p -l force-prefix -d "the prefix on each line of a message of several lines"
complete -c kmsg -n $c -l fields -d "show each record's fields"
complete -c kmsg -n $c -s L -l color -f -a 'auto always never' -d "colour (--color=WHEN)"
complete -c kmsg -n $c -s H -l human -d "reltime and colour (read: and a pager)"
complete -c kmsg -n $c -s l -l level -x -a '(__kmsg_list $__kmsg_levels)' -d "only these levels"
complete -c kmsg -n $c -s f -l facility -x -a '(__kmsg_list $__kmsg_facilities)' -d "only these facilities"
complete -c kmsg -n $c -s k -l kernel -d "only kern records"
complete -c kmsg -n $c -s u -l userspace -d "only records not of kern"
complete -c kmsg -n $c -l since -x -a 'now today yesterday tomorrow' -d "records at or after TIME"
complete -c kmsg -n $c -l until -x -a 'now today yesterday tomorrow' -d "records at or before TIME"
complete -c kmsg -n $c -l match -x -d "only records with field KEY=VALUE"
complete -c kmsg -n $c -s q -l quiet -d "no line where another boot's records begin"
complete -c kmsg -n $c -l show-caller -d "the caller id each writer gave, as dmesg 2.40: [  T123]"
complete -c kmsg -n $c -l show-pid -d "the pid each writer claims: [  P456]"

# the text and writer filters of read and follow (cmd/grep.c)
complete -c kmsg -n $c -s g -l grep -x -d "only records whose text matches a PCRE2 pattern"
complete -c kmsg -n $c -l case-sensitive -f -a 'yes no' -d "--grep case-sensitively (--case-sensitive=BOOL)"
complete -c kmsg -n $c -l pid -x -d "only records of these pids (comma list)"

# journalctl's cursors, in read and follow (cmd/cursor.c)
complete -c kmsg -n $c -l show-cursor -d "at the end, print the cursor of the last record read"
complete -c kmsg -n $c -l cursor -x -d "start at the record the cursor names"
complete -c kmsg -n $c -l after-cursor -x -d "start after the record the cursor names"
complete -c kmsg -n $c -l cursor-file -r -F -d "start after the cursor in FILE; keep the new one there"

# kmsg dump
set -l c '__kmsg_is dump'
complete -c kmsg -n $c -s o -l output -r -F -d "write the dump to FILE"
complete -c kmsg -n $c -l special -d "-o may be a FIFO or a device: write into it"
complete -c kmsg -n $c -l level -x -a '1 2 3 4 5 6 7 8 9' -d "compression level (default 1)"
complete -c kmsg -n $c -s v -l verbose -d "report records and bytes written"

# kmsg stat
set -l c '__kmsg_is stat'
complete -c kmsg -n $c -s J -l json -d "one JSON object"

# kmsg listen
set -l c '__kmsg_is listen'
complete -c kmsg -n $c -s u -l socket -r -F -d "the socket to bind (default /dev/log)"
complete -c kmsg -n $c -l stream -d "bind a stream socket rather than a datagram one"
complete -c kmsg -n $c -l log-size -x -d "size of the log if it must be made"
complete -c kmsg -n $c -l max-text -x -d "longest text of the log if it must be made"

# kmsg kernel
set -l c '__kmsg_is kernel'
complete -c kmsg -n $c -s w -l follow -d "keep copying as the kernel logs"
complete -c kmsg -n $c -l log-size -x -d "size of the log if it must be made"
complete -c kmsg -n $c -l max-text -x -d "longest text of the log if it must be made"
