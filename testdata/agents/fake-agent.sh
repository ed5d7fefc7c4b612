#!/bin/sh
# A stand-in for a coding-agent CLI, for the tests of src/exec: it performs the verbs given as
# arguments, in order, so that each test composes the behaviour it needs from one script.
#
#   say TEXT              print TEXT and a newline on stdout
#   print TEXT            print TEXT on stdout without a newline (one write: to split patterns)
#   warn TEXT             print TEXT and a newline on stderr
#   flood BYTES           print BYTES times `x` on stdout (more than a pipe buffer holds)
#   cat PATH              print the file PATH on stdout (a real agent's captured output)
#   edit PATH TEXT        append TEXT and a newline to PATH
#   stage PATH            `git add PATH`: staged work
#   commit MESSAGE        `git commit -a -m MESSAGE`: committed work (on the run's branch)
#   evidence JSON         write JSON to $BATON_EVIDENCE_FILE
#   cat-stdin PATH        copy stdin to PATH
#   unchanged TARGET REASON
#                         run `git baton unchanged TARGET REASON` (git-baton must be on PATH); its
#                         exit code is printed on stdout as `unchanged: N`
#   wait-for PATH         wait until PATH exists (at most 30 s, then exit 98)
#   env PATH              write the BATON_* variables to PATH, sorted
#   pid PATH              write this script's pid to PATH
#   sleep SECS            sleep (fractions allowed)
#   trap-term             ignore SIGTERM from now on (inherited by what is started after it)
#   spawn-child-sleep SECS PATH
#                         start `sleep SECS` in the background, holding stdout and stderr open,
#                         and write its pid to PATH
#   setsid-writer PATH PIDFILE
#                         start, in a session of its own and with stdin, stdout and stderr on
#                         /dev/null, a loop that appends a line to PATH every 50 ms for a minute;
#                         once it has written its first line, write "PID SID" of the loop to PIDFILE
#   cd-sleep SECS PIDFILE start `sleep SECS` in the background after `cd /`, its output on
#                         /dev/null, and write its pid to PIDFILE
#   check-ended PIDFILE OUT
#                         append `ended` or `alive` to OUT: whether the process whose pid starts
#                         PIDFILE is gone (a zombie is gone: it only waits to be reaped)
#   kill-self SIGNAL      send SIGNAL to this script
#   exit CODE             exit with CODE
#
# Without an `exit` verb the script exits 0. An unknown verb exits 99.

while [ "$#" -gt 0 ]; do
    verb=$1
    shift
    case $verb in
        say) printf '%s\n' "$1"; shift ;;
        print) printf '%s' "$1"; shift ;;
        warn) printf '%s\n' "$1" >&2; shift ;;
        flood) head -c "$1" /dev/zero | tr '\0' x; shift ;;
        cat) cat "$1"; shift ;;
        edit) printf '%s\n' "$2" >>"$1"; shift 2 ;;
        stage) git add -- "$1" || exit 97; shift ;;
        commit) git commit -q -a -m "$1" || exit 97; shift ;;
        evidence) printf '%s\n' "$1" >"$BATON_EVIDENCE_FILE"; shift ;;
        cat-stdin) cat >"$1"; shift ;;
        unchanged)
            git baton unchanged "$1" "$2"
            echo "unchanged: $?"
            shift 2 ;;
        wait-for)
            n=0
            while [ ! -e "$1" ]; do
                [ "$n" -lt 3000 ] || exit 98
                sleep 0.01; n=$((n + 1))
            done
            shift ;;
        env) env | grep '^BATON_' | sort >"$1"; shift ;;
        pid) echo "$$" >"$1"; shift ;;
        sleep) sleep "$1"; shift ;;
        trap-term) trap '' TERM ;;
        spawn-child-sleep) sleep "$1" & echo "$!" >"$2"; shift 2 ;;
        setsid-writer)
            setsid sh -c 'echo tick >>"$1"
                echo "$$ $(cut -d" " -f6 /proc/$$/stat)" >"$2.tmp" && mv "$2.tmp" "$2"
                n=0
                while [ "$n" -lt 1200 ]; do echo tick >>"$1"; sleep 0.05; n=$((n + 1)); done
                ' sh "$1" "$2" \
                </dev/null >/dev/null 2>&1 &
            # Bounded: at most 10 s for the loop to start.
            n=0
            while [ ! -s "$2" ] && [ "$n" -lt 1000 ]; do sleep 0.01; n=$((n + 1)); done
            shift 2 ;;
        cd-sleep) (cd / && exec sleep "$1") </dev/null >/dev/null 2>&1 & echo "$!" >"$2"; shift 2 ;;
        check-ended)
            pid=$(cut -d' ' -f1 "$1")
            state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
            case $state in
                '' | Z | X) echo ended ;;
                *) echo alive ;;
            esac >>"$2"
            shift 2 ;;
        kill-self) kill -s "$1" "$$"; shift ;;
        exit) exit "$1" ;;
        *) echo "fake-agent: unknown verb: $verb" >&2; exit 99 ;;
    esac
done
