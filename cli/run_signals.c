/* SPDX-License-Identifier: MIT */
/*
 * latprof run's signals: one signal, one delivery. The app runs in a
 * process group of its own, so a signal sent to latprof's group (kill %1
 * from a shell, kill -INT -PGID, kill 0 from a script) reaches latprof
 * alone and latprof forwards it once. When latprof is in the foreground of
 * a terminal, the app's group becomes the terminal's foreground group, so
 * Ctrl-C, Ctrl-\ and Ctrl-Z reach the app alone, straight from the
 * terminal; a stopped app stops latprof too (the shell sees the job stop),
 * and SIGCONT (fg, bg) continues both.
 *
 * One layout keeps the old shared group: latprof in the foreground of a
 * terminal without being its group's leader (a script or make run from a
 * terminal). Handing the terminal to the app there would take Ctrl-C away
 * from the script and its other children; so the app stays in the group,
 * terminal signals reach it directly and only signals sent by a process
 * are forwarded (a group kill from a script then arrives twice, as it
 * would for any two processes of that group).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "lp_cmd_run.h"

static volatile sig_atomic_t lp_app;	  /* the app's pid; 0 once it is gone */
static volatile sig_atomic_t lp_app_grp;  /* 1: the app leads a group of its own */
static volatile sig_atomic_t lp_stop_req; /* --wait=all: INT, TERM or HUP arrived */
static int lp_tty = -1;			  /* the controlling terminal, if any */

/* Make pgrp the terminal's foreground group if latprof's group holds it
 * now (from a background group tcsetpgrp would stop us with SIGTTOU).
 * Async-signal-safe: also called from the SIGCONT handler. */
static void tty_hand(pid_t from, pid_t to)
{
	if (lp_tty < 0 || tcgetpgrp(lp_tty) != from)
		return;
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(lp_tty, to);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void forward(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	int saved = errno;
	pid_t app = lp_app;
	if (app == 0) { /* the app is gone: only descendants are left */
		lp_stop_req = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
	} else if (!lp_app_grp) {
		/* Shared group: the terminal's signals reached the app already. */
		if (info->si_code == SI_USER || info->si_code == SI_QUEUE ||
		    info->si_code == SI_TKILL)
			kill(app, sig);
	} else if (sig == SIGCONT) {
		tty_hand(getpgrp(), app); /* fg: the app gets the terminal back */
		kill(-app, SIGCONT);
	} else if (sig == SIGHUP && lp_tty >= 0 && tcgetpgrp(lp_tty) < 0) {
		/* The terminal hung up: the kernel sent SIGHUP to its foreground
		 * group, the app's, already; the shell's resend is not forwarded. */
	} else if (info->si_code == SI_KERNEL) {
		kill(-app, sig); /* a terminal's signal to a foreground group */
	} else {
		kill(app, sig); /* kill(1), a scheduler: to latprof, so to the app */
	}
	errno = saved;
}

static void install(const int *sigs, size_t n)
{
	struct sigaction sa = {0};
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
}

int lp_run_signals_init(void)
{
	lp_tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	int fg = lp_tty >= 0 && tcgetpgrp(lp_tty) == getpgrp();
	lp_app_grp = !(fg && getpgrp() != getpid());
	if (!lp_app_grp && lp_tty >= 0) {
		close(lp_tty);
		lp_tty = -1;
	}
	return lp_app_grp;
}

void lp_run_signals_child(void)
{
	if (!lp_app_grp)
		return;
	pid_t parent_grp = getpgrp();
	setpgid(0, 0);
	tty_hand(parent_grp, getpid());
}

void lp_run_signals_parent(pid_t app)
{
	static const int fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	static const int cont[] = {SIGCONT};
	if (lp_app_grp) {
		setpgid(app, app); /* whichever of us runs first makes the group */
		tty_hand(getpgrp(), app);
		install(cont, 1);
	}
	lp_app = app;
	install(fwd, sizeof(fwd) / sizeof(fwd[0]));
}

void lp_run_signals_stopped(pid_t pid, int status)
{
	int sig = WSTOPSIG(status);
	if (pid != lp_app || !lp_app_grp || lp_tty < 0 ||
	    (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU))
		return;
	/* Job control stopped the app: stop latprof the same way so the shell
	 * sees the job stop and takes its terminal back. SIGCONT (fg or bg)
	 * continues latprof, whose handler continues the app. */
	tty_hand(pid, getpgrp());
	raise(sig);
}

void lp_run_signals_app_gone(void)
{
	pid_t app = lp_app;
	lp_app = 0;
	if (app && lp_app_grp)
		tty_hand(app, getpgrp());
}

int lp_run_signals_stop_requested(void)
{
	return lp_stop_req;
}
