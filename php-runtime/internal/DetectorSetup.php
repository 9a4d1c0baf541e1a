<?php declare(strict_types=1);

namespace PhpFuzz;

use PhpFuzz\Detectors\ClassInjection;
use PhpFuzz\Detectors\Xxe;

/**
 * Turns the detectors and the side-effect limits on for a harness: what
 * the engine asked in its Init request, what the target configured, and
 * the hooks PHP offers at run time (stream wrappers, libxml's entity
 * loader). See docs/detectors.md.
 *
 * @internal php-fuzz's harness, not an API
 */
final class DetectorSetup
{
    /** @var list<string>|null the detectors the engine chose (null: the target's, or all) */
    private static $choice = null;
    /** @var bool */
    private static $allowSideEffects = false;
    /** @var string the campaign's scratch folder */
    private static $scratchDir = '';

    /** The Init request's part: comparisons logged, detectors, side effects, scratch folder. */
    public static function readInit(WireReader $r): void
    {
        CmpLog::$enabled = $r->u8() === 1;
        self::$choice = $r->u8() === 1 ? $r->byteVectors() : null;
        self::$allowSideEffects = $r->u8() === 1;
        self::$scratchDir = $r->bytes();
    }

    /**
     * Once the target is loaded: the detectors on (the engine's choice, else
     * the target's, else all) and the folders a run may write in.
     *
     * @return array{0: list<string>, 1: list<string>}
     */
    public static function start(\PhpFuzzer\Config $config, string $runtimeDir): array
    {
        $names = self::$choice ?? $config->detectors ?? Detectors::NAMES;
        Detectors::enable($names, $runtimeDir);
        SideEffects::$refuse = !self::$allowSideEffects;
        $folders = \array_merge(self::$scratchDir === '' ? [] : [self::$scratchDir], $config->allowedWrites);
        SideEffects::allowWritesIn($folders);
        if (SideEffects::$refuse || Detectors::on('ssrf')) {
            NetworkInterceptor::enable();
        }
        Xxe::install();
        \spl_autoload_register([ClassInjection::class, 'autoload'], true, true);
        return [\array_values(\array_intersect(Detectors::NAMES, $names)), SideEffects::$refuse ? SideEffects::$writable : []];
    }

    /** Puts back what a target may have replaced: libxml's entity loader. */
    public static function beforeBatch(): void
    {
        Xxe::install();
    }
}
