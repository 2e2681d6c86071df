create or refresh streaming table orders_raw (
  constraint valid_id expect (id is not null) on violation drop row
)
comment 'lower case everywhere'
as select * from stream read_files('/data', format => 'json');

create or refresh materialized view totals as
select customer, sum(amount) as total, count(distinct id) as n
from orders_raw
where amount between 0 and 1000 and status not in ('void')
group by customer
having sum(amount) > 10
order by total desc nulls last
limit 5;

create flow f depends on (x) as auto cdc into t from stream(s) keys (id) apply as delete when op = 'd' sequence by ts stored as scd type 2;

apply changes into live.t from stream(live.s) keys (id) sequence by ts;

create temporary live view v as select cast(a as bigint), case when b then 1 else 0 end from live.t;
set a.b = c;
use catalog main;
