WITH recent AS (SELECT user_id, SUM(total) AS spent FROM orders GROUP BY user_id)
SELECT name, spent FROM users JOIN recent ON recent.user_id = users.id WHERE spent > 100;
