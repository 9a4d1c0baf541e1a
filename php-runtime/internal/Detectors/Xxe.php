<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `xxe`: the XML parser tries to load an external entity or DTD the input
 * named (`php-fuzz-xxe`). libxml asks its external entity loader for every
 * such resource; php-fuzz installs one, which reports the canary and
 * otherwise loads what libxml asked for, as libxml would. A parser that
 * neither substitutes entities (LIBXML_NOENT) nor loads DTDs
 * (LIBXML_DTDLOAD) never asks: safe code raises no alarm.
 *
 * @internal php-fuzz's harness, not an API
 */
final class Xxe
{
    /** @var \Closure|null */
    private static $loader = null;

    /** Installs the loader (again, if the target replaced it). */
    public static function install(): void
    {
        if (!Detectors::on('xxe') || !\function_exists('libxml_set_external_entity_loader')) {
            return;
        }
        if (self::$loader === null) {
            self::$loader = static function (?string $public, ?string $system, array $context) {
                return Xxe::load($public, $system);
            };
        }
        if (\function_exists('libxml_get_external_entity_loader')
            && \libxml_get_external_entity_loader() === self::$loader) {
            return;
        }
        \libxml_set_external_entity_loader(self::$loader);
    }

    /** @return string|null what libxml loads: the resource it asked for */
    public static function load(?string $public, ?string $system)
    {
        if (self::loaderDisabled()) {
            // The library turned entity loading off: nothing is loaded, as
            // without php-fuzz's loader (which PHP would call regardless).
            return null;
        }
        foreach ([$system, $public] as $id) {
            if ($id !== null && \stripos($id, Detectors::XXE) !== false) {
                [, , , $sink] = Detectors::site();
                Detectors::report('xxe', ($sink === '' ? 'the XML parser' : "$sink()")
                    . ' would load the external entity ' . Detectors::quote($id) . ' named by the input');
            }
        }
        return $system;
    }

    /** Whether the target called libxml_disable_entity_loader(true) (deprecated, still honoured). */
    private static function loaderDisabled(): bool
    {
        if (!\function_exists('libxml_disable_entity_loader')) {
            return false;
        }
        $disabled = @\libxml_disable_entity_loader(true);
        @\libxml_disable_entity_loader($disabled);
        return $disabled;
    }

    /** Steers a document toward a DOCTYPE that declares and uses the canary. */
    public static function guide(string $xml): void
    {
        if (!Detectors::on('xxe') || !\PhpFuzz\CmpLog::$enabled) {
            return;
        }
        if (\preg_match('/<([A-Za-z_][\w.:-]*)[^<>!?]*>/', $xml, $tag) === 1) {
            $doctype = '<!DOCTYPE ' . $tag[1] . ' [<!ENTITY x SYSTEM "' . Detectors::XXE . '">]>';
            Detectors::guide($tag[0], $doctype . $tag[0] . '&x;');
        }
    }
}
