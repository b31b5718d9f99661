# Recursion (direct and mutual): inclusive time counts only outermost calls.
use strict;
sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }
sub is_even { my $n = shift; return $n == 0 ? 1 : is_odd($n - 1) }
sub is_odd  { my $n = shift; return $n == 0 ? 0 : is_even($n - 1) }
sub ackermann {
	my ($m, $n) = @_;
	return $n + 1 if $m == 0;
	return ackermann($m - 1, 1) if $n == 0;
	return ackermann($m - 1, ackermann($m, $n - 1));
}
sub spin { my $x = 0; $x += $_ for 1 .. 20000; $x }
for (1 .. 3) { fib(14); spin(); }
is_even(90) for 1 .. 5;
ackermann(2, 3);
