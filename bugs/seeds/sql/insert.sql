INSERT INTO products (sku, title, price) VALUES ('A-100', 'Lamp', 19.90), ('B-200', 'Desk', 149.00);
UPDATE products SET price = price * 0.9 WHERE sku LIKE 'A-%';
DELETE FROM carts WHERE updated_at < NOW() - INTERVAL 30 DAY;
