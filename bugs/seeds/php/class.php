<?php
namespace App\Model;

use App\Contracts\Jsonable;

final class User implements Jsonable
{
    public const ROLE = 'user';
    private array $tags = [];

    public function __construct(private string $name, protected ?int $age = null) {}

    public function toJson(int $flags = 0): string
    {
        return json_encode(['name' => $this->name, 'age' => $this->age], $flags);
    }

    public static function make(string ...$names): static
    {
        return new static(implode(' ', $names));
    }
}
