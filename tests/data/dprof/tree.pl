use strict;
sub leaf { my $x = 0; $x += $_ for 1..2000; return $x }
sub mid  { my $s = 0; $s += leaf() for 1..5; return $s }
sub top  { my $s = 0; $s += mid() for 1..20; leaf(); return $s }
sub other { my $s = 0; for my $i (1..60000) { $s += $i*2 } return $s }
top() for 1..100;
other() for 1..40;
print "done\n";
