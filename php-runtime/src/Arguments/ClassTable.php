<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * The classes a signature reaches, and which of them php-fuzz can build:
 * a class is buildable when its public constructor's required parameters
 * all have a type with a value, counting only buildable classes (the least
 * fixed point, so a cycle of required objects is not buildable, and one
 * broken by a nullable or optional parameter is). Types are then pruned to
 * what can be built.
 *
 * @internal php-fuzz's own, not an API
 */
final class ClassTable
{
    /** The most classes one signature describes. */
    public const MAX_CLASSES = 200;

    /**
     * Each class's constructor parameters (ParameterReader's), or why it
     * cannot be built at all.
     *
     * @var array<string, array{error: ?string, parameters: list<array>}>
     */
    private static array $descriptions = [];

    /** @var array<string, array{error: ?string, parameters: list<array>}> the classes reached, in order */
    private array $reached = [];
    /** @var array<string, true> */
    private array $buildable = [];

    /**
     * Reaches the classes $types name, and the classes their constructors
     * name, and so on (at most MAX_CLASSES); then decides which are buildable.
     *
     * @param list<array> $types
     */
    public function reach(array $types): void
    {
        $queue = self::classesInAll($types);
        for ($i = 0; $i < \count($queue); $i++) {
            $class = $queue[$i];
            if (isset($this->reached[$class])) {
                continue;
            }
            $this->reached[$class] = \count($this->reached) < self::MAX_CLASSES
                ? self::describe($class)
                : ['error' => 'php-fuzz describes at most ' . self::MAX_CLASSES . ' classes per signature', 'parameters' => []];
            foreach ($this->reached[$class]['parameters'] as $parameter) {
                foreach (self::classesInAll($parameter['candidates']) as $next) {
                    if (!isset($this->reached[$next])) {
                        $queue[] = $next;
                    }
                }
            }
        }
        $this->solve();
    }

    /**
     * A parameter's type, pruned to what can be built: its first candidate
     * with a value; else for an optional parameter its fallback (null: the
     * schema stops before it); else a `none` type.
     */
    public function choose(array $parameter): ?array
    {
        foreach ($parameter['candidates'] as $candidate) {
            $pruned = $this->prune($candidate);
            if ($pruned !== null) {
                return $pruned;
            }
        }
        if ($parameter['variadic']) {
            return null;
        }

        return $parameter['optional'] ? $parameter['fallback'] : Types::none();
    }

    /** Why a type has no value: the reasons of the classes it names that cannot be built, if any. */
    public function whyNot(array $type): string
    {
        $reasons = [];
        if ($type['kind'] === 'none' && $type['why'] !== '') {
            $reasons[] = $type['why'];
        }
        foreach (self::classesIn($type) as $class) {
            if (!isset($this->buildable[$class])) {
                $reasons[] = "$class: " . $this->reason($class);
            }
        }
        $reasons = \array_slice(\array_values(\array_unique($reasons)), 0, 3);

        return $reasons === [] ? '' : ' (' . \implode('; ', $reasons) . ')';
    }

    /**
     * The `classes` of the schema: each buildable class the types name,
     * directly or through constructors, with its constructor's parameters;
     * sorted by name.
     *
     * @param list<array> $types pruned types
     * @return array<string, array{parameters: list<array>}>
     */
    public function classes(array $types): array
    {
        $classes = [];
        $queue = self::classesInAll($types);
        for ($i = 0; $i < \count($queue); $i++) {
            $class = $queue[$i];
            if (isset($classes[$class])) {
                continue;
            }
            $parameters = $this->parameters($this->reached[$class]['parameters']);
            $classes[$class] = ['parameters' => $parameters];
            foreach (self::classesInAll(\array_column($parameters, 'type')) as $next) {
                if (!isset($classes[$next])) {
                    $queue[] = $next;
                }
            }
        }
        \ksort($classes, \SORT_STRING);

        return $classes;
    }

    /**
     * Raw parameters as the schema writes them: each with its chosen type;
     * the list stops at an optional parameter with no type (and drops a
     * variadic one with none).
     *
     * @param list<array> $raw
     * @return list<array{name: string, type: array, optional: bool, variadic: bool}>
     * @throws NotFuzzable a required parameter has no type
     */
    public function parameters(array $raw): array
    {
        $parameters = [];
        foreach ($raw as $parameter) {
            $type = $this->choose($parameter);
            if ($type === null) {
                break;
            }
            if (Types::isNone($type)) {
                throw new NotFuzzable($this->unbuildable($parameter));
            }
            $parameters[] = [
                'name' => $parameter['name'],
                'type' => $type,
                'optional' => $parameter['optional'],
                'variadic' => $parameter['variadic'],
            ];
        }

        return $parameters;
    }

    /** `parameter $h of X::y() takes resource, which php-fuzz cannot build (…)`. */
    public function unbuildable(array $parameter): string
    {
        $why = '';
        foreach ($parameter['candidates'] as $candidate) {
            $why = $why !== '' ? $why : $this->whyNot($candidate);
        }

        return "parameter \${$parameter['name']} of {$parameter['function']} takes {$parameter['text']}, which php-fuzz cannot build$why";
    }

    /**
     * The type with only what can be built, or null when nothing can: object
     * types keep their buildable classes, unions their members with a value,
     * a possibly empty list or array of nothing is the empty array.
     */
    public function prune(array $type): ?array
    {
        return match ($type['kind']) {
            'none' => null,
            'object' => $this->pruneObject($type),
            'union' => $this->pruneUnion($type),
            'list' => $this->pruneContainer($type, [$type['of']], static fn (array $of): array => Types::list($of[0], $type['non_empty'])),
            'array' => $this->pruneContainer($type, [$type['key'], $type['value']], static fn (array $kv): array => Types::array($kv[0], $kv[1], $type['non_empty'])),
            'shape' => $this->pruneShape($type),
            'closure' => ($returns = $this->prune($type['returns'])) === null ? null : Types::closure($returns),
            default => $type,
        };
    }

    private function pruneObject(array $type): ?array
    {
        $classes = \array_keys(\array_intersect_key(\array_flip($type['classes']), $this->buildable));

        return $classes === [] ? null : Types::object($classes);
    }

    private function pruneUnion(array $type): ?array
    {
        $members = \array_values(\array_filter(\array_map(fn (array $member): ?array => $this->prune($member), $type['of'])));

        return $members === [] ? null : Types::union($members);
    }

    /**
     * @param list<array> $parts
     * @param \Closure(list<array>): array $rebuild
     */
    private function pruneContainer(array $type, array $parts, \Closure $rebuild): ?array
    {
        $pruned = \array_map(fn (array $part): ?array => $this->prune($part), $parts);
        if (!\in_array(null, $pruned, true)) {
            return $rebuild($pruned);
        }

        return $type['non_empty'] ? null : ['kind' => 'shape', 'items' => []];
    }

    private function pruneShape(array $type): ?array
    {
        $items = [];
        foreach ($type['items'] as $item) {
            $pruned = $this->prune($item['type']);
            if ($pruned === null && !$item['optional']) {
                return null;
            }
            if ($pruned !== null) {
                $items[] = ['key' => $item['key'], 'optional' => $item['optional'], 'type' => $pruned];
            }
        }

        return ['kind' => 'shape', 'items' => $items];
    }

    /** Whether a type has a value, counting the classes buildable so far. */
    private function satisfiable(array $type): bool
    {
        return match ($type['kind']) {
            'none' => false,
            'object' => \array_intersect_key(\array_flip($type['classes']), $this->buildable) !== [],
            'union' => \array_filter($type['of'], fn (array $member): bool => $this->satisfiable($member)) !== [],
            'list' => !$type['non_empty'] || $this->satisfiable($type['of']),
            'array' => !$type['non_empty'] || ($this->satisfiable($type['key']) && $this->satisfiable($type['value'])),
            'shape' => \array_filter($type['items'], fn (array $item): bool => !$item['optional'] && !$this->satisfiable($item['type'])) === [],
            'closure' => $this->satisfiable($type['returns']),
            default => true,
        };
    }

    private function solve(): void
    {
        do {
            $changed = false;
            foreach ($this->reached as $class => $description) {
                if (!isset($this->buildable[$class]) && $description['error'] === null && $this->firstUnbuildable($description['parameters']) === null) {
                    $this->buildable[$class] = true;
                    $changed = true;
                }
            }
        } while ($changed);
    }

    /** The first required parameter with no candidate that has a value, or null. */
    private function firstUnbuildable(array $parameters): ?array
    {
        foreach ($parameters as $parameter) {
            if ($parameter['optional'] || $parameter['variadic']) {
                continue;
            }
            if (\array_filter($parameter['candidates'], fn (array $c): bool => $this->satisfiable($c)) === []) {
                return $parameter;
            }
        }

        return null;
    }

    private function reason(string $class): string
    {
        $description = $this->reached[$class] ?? self::describe($class);
        if ($description['error'] !== null) {
            return $description['error'];
        }
        $parameter = $this->firstUnbuildable($description['parameters']);

        return $parameter === null ? 'php-fuzz cannot build it'
            : "parameter \${$parameter['name']} of {$parameter['function']} takes {$parameter['text']}, which php-fuzz cannot build";
    }

    /**
     * The classes an object type names, in it and in its members and items.
     *
     * @return list<string>
     */
    private static function classesIn(array $type): array
    {
        return match ($type['kind']) {
            'object' => $type['classes'],
            'union' => \array_merge([], ...\array_map(static fn (array $t): array => self::classesIn($t), $type['of'])),
            'list' => self::classesIn($type['of']),
            'array' => self::classesIn($type['value']),
            'shape' => \array_merge([], ...\array_map(static fn (array $item): array => self::classesIn($item['type']), $type['items'])),
            'closure' => self::classesIn($type['returns']),
            default => [],
        };
    }

    /**
     * @param list<array> $types
     * @return list<string>
     */
    private static function classesInAll(array $types): array
    {
        return \array_values(\array_unique(\array_merge([], ...\array_map(static fn (array $t): array => self::classesIn($t), $types))));
    }

    /** @return array{error: ?string, parameters: list<array>} */
    private static function describe(string $class): array
    {
        if (!isset(self::$descriptions[$class])) {
            try {
                self::$descriptions[$class] = self::describeNow(new \ReflectionClass($class));
            } catch (\ReflectionException $e) {
                self::$descriptions[$class] = ['error' => $e->getMessage(), 'parameters' => []];
            }
        }

        return self::$descriptions[$class];
    }

    /** @return array{error: ?string, parameters: list<array>} */
    private static function describeNow(\ReflectionClass $class): array
    {
        $constructor = $class->getConstructor();
        $error = match (true) {
            $class->isAbstract() || $class->isInterface() || $class->isEnum() => 'it is not a concrete class',
            $class->isInternal() && !ClassTypes::buildsBuiltIn($class) => 'php-fuzz does not build objects of this built-in class',
            DocTypes::isInternal($class->getDocComment()) => 'it is @internal',
            $constructor !== null && !$constructor->isPublic() => 'its constructor is not public',
            $constructor !== null && DocTypes::isInternal($constructor->getDocComment()) => 'its constructor is @internal',
            default => null,
        };
        if ($error !== null || $constructor === null) {
            return ['error' => $error, 'parameters' => []];
        }
        $root = $class->getFileName() !== false ? [ClassFinder::rootOf($class->getName(), $class->getFileName())] : [];

        return ['error' => null, 'parameters' => ParameterReader::read($constructor, $root)];
    }
}
