#!/bin/sh
# A `notify:` command for the tests of docs/notify.md. It saves the document on its stdin as
# DIR/N.json (N = 1, 2, … in the order of the notifications) and its BATON_* variables as
# DIR/N.env, prints a line on stdout and one on stderr, then performs the verbs that follow:
#
#   pid PATH      write its pid (also its process group id) to PATH
#   sleep SECS    sleep (to outlast a timeout)
#   exit CODE     exit with CODE
#
# Without an `exit` verb it exits 0. An unknown verb exits 99.

dir=$1
shift
mkdir -p "$dir" || exit 97
n=1
while [ -e "$dir/$n.json" ]; do n=$((n + 1)); done
# Renamed into place once whole: a test that sees N.json reads all of it.
cat >"$dir/$n.json.tmp" && mv "$dir/$n.json.tmp" "$dir/$n.json" || exit 97
env | grep '^BATON_' | sort >"$dir/$n.env"
echo "notified $n"
echo "a word on stderr" >&2
while [ "$#" -gt 0 ]; do
    case $1 in
        pid) echo "$$" >"$2"; shift 2 ;;
        sleep) sleep "$2"; shift 2 ;;
        exit) exit "$2" ;;
        *) echo "notifier: unknown verb: $1" >&2; exit 99 ;;
    esac
done
