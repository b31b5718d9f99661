# Many named subs (more rows than a 60-line page) with varied costs and call counts.
use strict;
for my $i (1 .. 90) {
	my $n = ($i * 37) % 91;
	eval "sub work_$i { my \$x = 0; \$x += \$_ for 1 .. (60 * $n); \$x } 1" or die $@;
}
no strict 'refs';
sub driver { my $k = shift; &{"main::work_$_"}() for 1 .. $k }
for my $round (1 .. 6) { driver(90 - 10 * $round) }
&{"main::work_$_"}() for 1 .. 90;
