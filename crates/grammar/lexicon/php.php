<?php
// The php grammar's lexicon: one small example of each lexical form of PHP,
// learned as pinned fragments before any seed (docs/grammar.md, "Lexicon").
// Seeds rarely hold every escape, number base or rare token; a lexer's
// corner cases (PHP-Parser's escapes, say) live behind exactly these.
declare(strict_types=1);
namespace Lexicon\Sub;

use function strlen as len;
use const PHP_EOL as EOL;
use Lexicon\{A, B as C};

$escapes = ["\n\r\t\v\e\f\\\$\"", "\0\7\101\377", "\x0\x41\xFF\xg", "\u{0}\u{41}\u{00e9}\u{1F600}\u{10FFFF}\u{000000000000000041}", "\u41\{$escapes}"];
$single = ['it\'s \\ \n \x41'];
$numbers = [0, -0, 1_000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 9223372036854775807, 9223372036854775808, -9223372036854775808, 0b1010, 0o17, 017, 08.5, 1e308, 1e309, 1.5e-324, .5, 6., 0x1_F, 0x00000000000000000041, 0000000000000000000000017, NAN, INF];
$interpolated = "$a $a[0] $a[k] $a[-1] $a->b $a?->b {$a['k']} {$a->b()} ${a} ${a['k']} {$a::$b}";
$heredoc = <<<EOT
    \x41\u{42}\103 $a {$b[0]} ${c}
      indented \\ \$
    EOT;
$nowdoc = <<<'EOT'
    raw \x41 $a
    EOT;
$empty = <<<EOT
EOT;
$shell = `echo \x41`;
$casts = [(int) $a, (integer) $a, (bool) $a, (boolean) $a, (float) $a, (double) $a, (string) $a, (binary) $a, (array) $a, (object) $a];
$ops = [$a <=> $b, $a ** -$b, $a ?? $b, $a ?: $b, $a?->b?->c, $a instanceof $b, !$a, ~$a, @$a, $a <> $b, $a xor $b, $a and $b, $a or $b, $a . $b, $a << 64, $a >> -1, $a % 0, $a / 0, intdiv(PHP_INT_MIN, -1)];
$a ??= $b; $a **= 2; $a .= "x"; $a <<= 1; $a >>= 1; $a ^= $b; $a &= $b; $a |= $b; $a %= $b;
[$a, [, $b], [&$c]] = $a; ['k' => $d, 'l' => [$e]] = $a;
list('k' => list($x)) = $a;
$$a = ${'b' . 'c'}; $a->{'b'} = $a::{'c'}(...); $a::$b::$c = A::B;
$f = static fn &(int|string $x, ?A $y = null, A&B $z = new C(), ...$rest): never => throw new \Exception(__LINE__ . __FILE__ . __DIR__ . __FUNCTION__ . __CLASS__ . __METHOD__ . __NAMESPACE__ . A::class);
$g = function () use ($a, &$b): iterable { static $n = 0; global $g; yield $n => $a; yield from [1]; return $this; };
$h = strlen(...);
$i = len(...$spread) . len(string: 'named');
$m = match (true) { $a > 1, $a < -1 => 'big', default => null };
$o = new class(1) extends A implements B { public function __construct(public readonly int $x) {} };
$p = clone $a; print $a; echo $a, $b; unset($a[0], $b->c); isset($a, $b['c']); empty($a); eval('return 1;');
include 'a.php'; include_once 'b.php'; require 'c.php'; require_once 'd.php';
if ($a): elseif ($b): else: endif;
while ($a): endwhile; for (;;): endfor; foreach ($a as $k => &$v): endforeach; switch ($a): case 1; default: endswitch;
declare(ticks=1) { goto end; }
end:
try { throw new \Error(); } catch (\Error|\Exception) { } finally { }
abstract class Base { abstract protected function f(): mixed; final public const X = 1; public static ?self $s = null; }
final readonly class Value extends Base implements \Countable, \Stringable { use T { T::f as protected g; T::h insteadof U; } public function count(): int { return 0; } public function __toString(): string { return parent::class . self::X . static::class; } protected function f(): mixed { return null; } }
interface I extends J, K { const C = 1; public function m(iterable $i, callable $c, object $o, false $f, true $t, null $n, mixed ...$v); }
trait T { public function f() {} abstract public static function h(); }
enum Suit: string implements I { case Hearts = 'H'; case Spades = 'S'; const Wild = self::Spades; public function label(): string { return $this->name; } }
#[Attribute(Attribute::TARGET_ALL), Other('x')]
function attributed(#[SensitiveParameter] $secret): void {}
function &byRef(array &$a = [], int ...$n): ?iterable { return $a; }
namespace\attributed(1); \strlen(''); exit(1); die;
?>
inline <b>html</b> <?= $a ?>
<?php
# hash comment
/** @var int $doc */
/* block */
__halt_compiler();
