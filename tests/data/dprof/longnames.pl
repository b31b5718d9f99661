# Long package and sub names: the Name column (34 wide) wraps them onto
# continuation lines, which also show what is left of cut CumulS/Csec/c values.
use strict;
package Some::Very::Long::Package::Name::For::Testing;
sub a_rather_long_subroutine_name_that_does_not_fit { my $x = 0; $x += $_ for 1 .. 3000; $x }
sub short { 1 }
package Another::Extremely::Long::Namespace::That::Goes::On::And::On::Forever;
sub with_an_even_longer_subroutine_name_to_force_several_continuation_lines { Some::Very::Long::Package::Name::For::Testing::a_rather_long_subroutine_name_that_does_not_fit() }
sub x { 1 }
package main;
sub caller_of_everything_with_a_name_exactly_34c { Some::Very::Long::Package::Name::For::Testing::short() }
for (1 .. 200) {
	Another::Extremely::Long::Namespace::That::Goes::On::And::On::Forever::with_an_even_longer_subroutine_name_to_force_several_continuation_lines();
	Another::Extremely::Long::Namespace::That::Goes::On::And::On::Forever::x();
	caller_of_everything_with_a_name_exactly_34c();
}
