# A deep and wide call tree: chains of distinct subs, die unwinding many frames.
use strict;
no strict 'refs';
for my $i (1 .. 40) {
	my $next = $i + 1;
	*{"main::level$i"} = $i == 40
		? sub { my $x = 0; $x += $_ for 1 .. 500; die "bottom\n" if $_[0]; $x }
		: sub { my $r = &{"main::level$next"}(@_); $r };
}
sub leafy { my $x = 0; $x += $_ for 1 .. 100; $x }
sub fan { leafy() for 1 .. 5; level30(0) }
for (1 .. 60) {
	level1(0);
	eval { level1(1) };
	fan();
}
