/* main.c — libstrobe-rt's main, apart from the rest so that a program with its own
 * main (one that links the runtime for anything else) does not pull it in from
 * libstrobe-rt.a.
 *
 * strobe_entry is a weak reference: a program without it still links against
 * libstrobe-rt.so, and a standalone program built without --entry gets an error
 * message from strobe_rt_main instead of a jump to address 0. */
#include "strobe/rt.h"

#pragma weak strobe_entry

int main(int argc, char **argv) { return strobe_rt_main(argc, argv, strobe_entry); }
