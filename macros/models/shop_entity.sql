{#-
  The shop's bronze entities, each said once: its key, its staged columns (the name in the
  lakehouse: the expression that renames and casts the bronze column, in select order) and the
  rules a change of it must pass besides the common ones. The staging views, the silver models
  and the quarantine all read them from here (shop_staged_columns, shop_change_rejection,
  shop_change_order, shop_current_state). An order without a status or a date is refused: it
  cannot be counted honestly in revenue by date; a payment whose provider response is not a JSON
  document is refused (its silver model stores the response as a VARIANT).
-#}
{% macro shop_entity(source_table) -%}
    {%- set entities = {
        'customers': {
            'key': 'customer_id',
            'columns': {
                'customer_id': 'cast(customer_id as bigint)',
                'full_name': 'full_name',
                'email': 'lower(email)',
                'country_code': 'upper(country_code)',
                'created_at': 'created_at',
                'updated_at': 'updated_at',
            },
            'rules': [],
        },
        'orders': {
            'key': 'order_id',
            'columns': {
                'order_id': 'cast(order_id as bigint)',
                'customer_id': 'cast(customer_id as bigint)',
                'status': 'lower(status)',
                'ordered_at': 'ordered_at',
                'updated_at': 'updated_at',
            },
            'rules': [
                ("change_op != 'D' and customer_id is null", 'customer_id is null'),
                ("change_op != 'D' and status is null", 'status is null'),
                ("change_op != 'D' and ordered_at is null", 'ordered_at is null'),
            ],
        },
        'order_lines': {
            'key': 'order_line_id',
            'columns': {
                'order_line_id': 'cast(order_line_id as bigint)',
                'order_id': 'cast(order_id as bigint)',
                'product_id': 'cast(product_id as bigint)',
                'quantity': 'cast(quantity as int)',
                'unit_price': 'cast(unit_price as decimal(10, 2))',
                'updated_at': 'updated_at',
            },
            'rules': [
                ("change_op != 'D' and (quantity is null or quantity <= 0)",
                    'quantity is not positive'),
            ],
        },
        'products': {
            'key': 'product_id',
            'columns': {
                'product_id': 'cast(product_id as bigint)',
                'product_name': 'product_name',
                'category': 'lower(category)',
                'unit_price': 'cast(unit_price as decimal(10, 2))',
                'updated_at': 'updated_at',
            },
            'rules': [
                ("change_op != 'D' and (unit_price is null or unit_price < 0)",
                    'unit_price is missing or negative'),
            ],
        },
        'payments': {
            'key': 'payment_id',
            'columns': {
                'payment_id': 'cast(payment_id as bigint)',
                'order_id': 'cast(order_id as bigint)',
                'payment_method': 'lower(payment_method)',
                'amount': 'cast(amount as decimal(12, 2))',
                'paid_at': 'paid_at',
                'updated_at': 'updated_at',
                'provider_response': 'provider_response',
            },
            'rules': [
                ("change_op != 'D' and order_id is null", 'order_id is null'),
                ("change_op != 'D' and amount is null", 'amount is null'),
                ("change_op != 'D' and try_parse_json(provider_response) is null",
                    'provider_response is missing or not JSON'),
            ],
        },
    } -%}
    {%- if source_table not in entities -%}
        {{ exceptions.raise_compiler_error(
            "shop_entity: source_table must be one of " ~ entities | list | join(', ')
            ~ ", got '" ~ source_table ~ "'.") }}
    {%- endif -%}
    {{ return(entities[source_table]) }}
{%- endmacro %}
