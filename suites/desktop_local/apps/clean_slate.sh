#!/bin/sh
# The state every desktop_local task starts from, on any machine, reset between episodes or not (OSWorld's server
# has no reset, and a guitest desktop started with --no-reset keeps what each episode leaves):
#   - the windows this suite's applications open on this display are closed and their programs ended (an earlier
#     episode's xterm would cover the next task's click points; a running Mousepad would open the next file in
#     its old window; a browser window titled "Chosen: green" would pass pick-green for an agent that does nothing);
#   - Mousepad's session (which an ended Mousepad would offer to restore instead of opening the file), the pages'
#     Chromium profile, and the files and folders given as arguments (what the task's evaluator checks) are
#     removed, so only this episode's agent can put them there;
#   - the home folder's Desktop, Documents and Downloads exist.
# Usage (a task's first config steps): upload this file to ~/apps/clean_slate.sh, then
#   {"type": "execute", "parameters": {"command": ["sh", "~/apps/clean_slate.sh", "~/Documents/hello.txt", ...]}}
TITLES='guitest Terminal|Mousepad|Pick a colour|Chosen: |Sign-up form|Submitted: '

programs() {
	# windows of this display that carry their program's pid (wmctrl -lp: id, desktop, pid, host, title)
	wmctrl -lp 2>/dev/null | awk '$3 > 0' | grep -E "$TITLES" | awk '{print $3}'
	# the Tk apps set no pid on their windows; the browser runs several processes: both by their command line
	pgrep -f "$HOME/apps/(settings_dialog|notes_app)[.]py"
	pgrep -f -- "[-]-user-data-dir=$HOME/[.]chromium"
}

end() {  # send signal $1 to them and wait up to 5 s until they and their windows are gone
	pids=$(programs | sort -u)
	[ -n "$pids" ] || return 0
	kill "$1" $pids 2>/dev/null
	i=0
	while [ -n "$(programs)" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

end -TERM
end -KILL
# an ended Mousepad counts as crashed: its next start would ask whether to restore that session instead of opening the file
command -v gsettings >/dev/null && gsettings reset org.xfce.mousepad.state.application session 2>/dev/null
rm -rf -- "$HOME/.chromium" "$HOME/.local/share/Mousepad" "$@"
mkdir -p "$HOME/Desktop" "$HOME/Documents" "$HOME/Downloads"
exit 0
