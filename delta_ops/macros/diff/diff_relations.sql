{#-
  A keyed data diff of relation `a` with relation `b`, or, with only `a` and a `version` or
  `timestamp`, of `a` with an earlier Delta version of itself ("what did the last run change").
  `a` and `b` are model, seed or snapshot names of the project or 'schema.table' names. The key:
  `key`, else the model's unique_key config, else its contract's primary_key constraint.
  Logs one summary (rows only in a, only in b, changed, unchanged; per column how many rows
  changed; up to `samples` sample keys of each kind) and returns it as a dict. The key must be
  unique on each side (checked first). `fail_on_diff: true` fails (non-zero exit) when anything
  differs, for CI.
-#}
{% macro diff_relations(a=none, b=none, key=none, version=none, timestamp=none, columns=none,
    tolerance=none, samples=5, fail_on_diff=false) %}
  {%- set op = 'diff_relations' -%}
  {%- do delta_ops._require_sparkdelta(op) -%}
  {%- if a is none -%}
    {{ exceptions.raise_compiler_error(op ~ ": give a (a model or 'schema.table'), and b or a "
        ~ "version/timestamp of a, e.g. --args '{a: dev.fct_orders, b: lakehouse.fct_orders}' or "
        ~ "--args '{a: fct_orders, version: 3}'.") }}
  {%- endif -%}
  {%- if b is none and version is none and timestamp is none -%}
    {{ exceptions.raise_compiler_error(op ~ ": give b (the relation to compare " ~ a
        ~ " with) or a version or timestamp of " ~ a ~ ".") }}
  {%- endif -%}
  {%- if samples is boolean or not modules.re.fullmatch('[0-9]+', samples | string) -%}
    {{ exceptions.raise_compiler_error("Invalid " ~ op ~ " samples " ~ (samples | string | tojson)
        ~ ": give a whole number >= 0 (sample keys of each kind).") }}
  {%- endif -%}
  {%- if fail_on_diff is not boolean -%}
    {{ exceptions.raise_compiler_error("Invalid " ~ op ~ " fail_on_diff "
        ~ (fail_on_diff | string | tojson) ~ ": give true or false.") }}
  {%- endif -%}
  {%- if tolerance is not none and (tolerance is boolean or tolerance is not number or tolerance < 0) -%}
    {{ exceptions.raise_compiler_error("Invalid " ~ op ~ " tolerance " ~ (tolerance | string | tojson)
        ~ ": give a number >= 0 (numeric columns differing by at most it count as equal).") }}
  {%- endif -%}
  {%- set side_a = delta_ops._diff_side(a, 'a') -%}
  {%- set side_b = delta_ops._diff_side(b, 'b') if b is not none else side_a -%}
  {%- set as_of = delta_ops._time_travel_clause(version, timestamp, op ~ ' of ' ~ side_b.relation) -%}
  {%- set name_b = side_b.relation ~ as_of -%}
  {%- set key_names = delta_ops._diff_key(key, side_a, side_b) -%}
  {%- set wanted = delta_ops._as_list(columns, op ~ ' argument columns') -%}
  {%- for c in wanted -%}{%- do safe_identifier(c, op ~ ' column') -%}{%- endfor -%}
  {%- set types_a = delta_ops._diff_columns(side_a.relation ~ '', 'a') -%}
  {%- set types_b = delta_ops._diff_columns(name_b, 'b' if b is not none else ('version' if version is not none else 'timestamp')) -%}

  {#- Resolve names case-insensitively (as Spark does), in a's column order. -#}
  {%- set lower_a, lower_b = {}, {} -%}
  {%- for c in types_a -%}{%- do lower_a.update({c | lower: c}) -%}{%- endfor -%}
  {%- for c in types_b -%}{%- do lower_b.update({c | lower: c}) -%}{%- endfor -%}
  {%- set key_columns = [] -%}
  {%- for k in key_names -%}
    {%- for side, names, relation in [('a', lower_a, side_a.relation), ('b', lower_b, name_b)] if k | lower not in names -%}
      {{ exceptions.raise_compiler_error(op ~ ": key column " ~ k ~ " is not a column of " ~ side
          ~ " (" ~ relation ~ "); its columns: " ~ names.values() | join(', ') ~ ". Give key.") }}
    {%- endfor -%}
    {%- do key_columns.append(lower_a[k | lower]) -%}
  {%- endfor -%}
  {%- set key_lower = key_columns | map('lower') | list -%}
  {%- set only_in_a, only_in_b, common = [], [], [] -%}
  {%- for c in types_a if c | lower not in key_lower -%}
    {%- if c | lower in lower_b -%}{%- do common.append(c) -%}{%- else -%}{%- do only_in_a.append(c) -%}{%- endif -%}
  {%- endfor -%}
  {%- for c in types_b if c | lower not in key_lower and c | lower not in lower_a -%}
    {%- do only_in_b.append(c) -%}
  {%- endfor -%}
  {%- set compared = [] -%}
  {%- if wanted -%}
    {%- for c in wanted -%}
      {%- if c | lower in key_lower -%}
        {{ exceptions.raise_compiler_error(op ~ ": column " ~ c ~ " is part of the key; columns "
            ~ "lists the other columns to compare.") }}
      {%- endif -%}
      {%- for side, names, relation in [('a', lower_a, side_a.relation), ('b', lower_b, name_b)] if c | lower not in names -%}
        {{ exceptions.raise_compiler_error(op ~ ": column " ~ c ~ " is not a column of " ~ side
            ~ " (" ~ relation ~ "); its columns: " ~ names.values() | join(', ') ~ ".") }}
      {%- endfor -%}
      {%- do compared.append(lower_a[c | lower]) -%}
    {%- endfor -%}
  {%- else -%}
    {%- set compared = common -%}
  {%- endif -%}
  {%- set numeric, text = [], [] -%}
  {%- for c in compared -%}
    {%- set type_a, type_b = types_a[c], types_b[lower_b[c | lower]] -%}
    {%- if type_a != type_b -%}{%- do text.append(c) -%}
    {%- elif modules.re.fullmatch('(tinyint|smallint|int|bigint|float|double|decimal.*)', type_a) -%}
      {%- do numeric.append(c) -%}
    {%- endif -%}
  {%- endfor -%}

  {#- The key must be unique on each side, or the counts mean nothing. -#}
  {%- for side, relation in [('a', side_a.relation ~ ''), ('b', name_b)] -%}
    {%- set dups = delta_ops._try_sql(delta_ops._diff_duplicates_sql(relation, key_columns)) -%}
    {%- if dups.error -%}
      {{ exceptions.raise_compiler_error(op ~ ": checking the key of " ~ side ~ " (" ~ relation
          ~ "): " ~ dups.error) }}
    {%- endif -%}
    {%- if dups.table.rows | length -%}
      {%- set shown = [] -%}
      {%- for row in dups.table.rows -%}
        {%- do shown.append(delta_ops._diff_key_text(fromjson(row['sample']).key) ~ ' x' ~ row['n'] | int) -%}
      {%- endfor -%}
      {{ exceptions.raise_compiler_error(op ~ ": the key (" ~ key_columns | join(', ') ~ ") is not "
          ~ "unique in " ~ side ~ " (" ~ relation ~ "): " ~ dups.table.rows[0]['keys'] | int
          ~ " duplicated key" ~ ('s' if dups.table.rows[0]['keys'] | int != 1 else '') ~ ", e.g. " ~ shown | join(', ') ~ ". Give a unique key.") }}
    {%- endif -%}
  {%- endfor -%}

  {%- set started = modules.datetime.datetime.now() -%}
  {%- set sql = delta_ops.get_diff_relations_sql(side_a.relation, side_b.relation, key_columns, compared,
      version, timestamp, tolerance, numeric, text) -%}
  {%- set counted = delta_ops._try_sql(sql) -%}
  {%- if counted.error -%}
    {{ exceptions.raise_compiler_error(op ~ " of " ~ side_a.relation ~ " with " ~ name_b ~ ": "
        ~ counted.error) }}
  {%- endif -%}
  {%- set row = delta_ops._rows_as_dicts(counted.table)[0] -%}
  {%- set column_changes = {} -%}
  {%- for c in compared -%}
    {%- do column_changes.update({c: row['changed_' ~ loop.index0] | int}) -%}
  {%- endfor -%}
  {%- set result = {
      'a': side_a.relation | string, 'b': name_b | string, 'key': key_columns,
      'rows_a': row.rows_a | int, 'rows_b': row.rows_b | int,
      'only_in_a': row.only_in_a | int, 'only_in_b': row.only_in_b | int,
      'changed': row.changed | int, 'unchanged': row.unchanged | int,
      'columns': compared, 'column_changes': column_changes,
      'columns_only_in_a': only_in_a, 'columns_only_in_b': only_in_b,
      'compared_as_text': text, 'tolerance': tolerance,
      'samples': {'only_in_a': [], 'only_in_b': [], 'changed': []}} -%}
  {%- do result.update({'differs': (result.only_in_a + result.only_in_b + result.changed) > 0
      or (only_in_a + only_in_b) | length > 0}) -%}
  {%- if samples | int > 0 and (result.only_in_a + result.only_in_b + result.changed) > 0 -%}
    {%- set sampled = delta_ops._try_sql(delta_ops.get_diff_relations_sql(side_a.relation, side_b.relation, key_columns,
        compared, version, timestamp, tolerance, numeric, text, samples=samples | int)) -%}
    {%- if sampled.error -%}
      {{ exceptions.raise_compiler_error(op ~ ": sample keys: " ~ sampled.error) }}
    {%- endif -%}
    {%- for s in delta_ops._rows_as_dicts(sampled.table) -%}
      {%- do result.samples[s.kind].append(fromjson(s.sample)) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do result.update({'seconds': (modules.datetime.datetime.now() - started).total_seconds()}) -%}
  {%- do delta_ops._diff_report(result) -%}
  {%- if fail_on_diff and result.differs -%}
    {{ exceptions.raise_compiler_error(op ~ ": " ~ side_a.relation ~ " and " ~ name_b ~ " differ ("
        ~ result.only_in_a ~ " rows only in a, " ~ result.only_in_b ~ " only in b, " ~ result.changed
        ~ " changed" ~ (", columns only in one side" if (only_in_a + only_in_b) else '')
        ~ ") and fail_on_diff is true.") }}
  {%- endif -%}
  {{ return(result) }}
{% endmacro %}


{#- {'relation', 'node'} of an argument: a model, seed or snapshot name of the project (its
    relation) or a 'table' / 'schema.table' name (with the node that writes it, if any). -#}
{% macro _diff_side(name, argument) %}
  {%- if name is not string -%}
    {{ exceptions.raise_compiler_error("Invalid diff_relations argument " ~ argument ~ " "
        ~ (name | string | tojson) ~ ": give a model name or 'schema.table'.") }}
  {%- endif -%}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed', 'snapshot'])
      | rejectattr('config.materialized', 'equalto', 'ephemeral') | list -%}
  {%- if '.' not in name -%}
    {%- set matches = nodes | selectattr('name', 'equalto', name) | list -%}
    {%- if matches -%}
      {%- set node = matches[0] -%}
      {{ return({'relation': delta_ops.relation_from_name(node.schema ~ '.' ~ (node.alias or node.name),
          'diff_relations argument ' ~ argument), 'node': node}) }}
    {%- endif -%}
  {%- endif -%}
  {%- set relation = delta_ops.relation_from_name(name, 'diff_relations argument ' ~ argument) -%}
  {%- set owners = nodes | selectattr('schema', 'equalto', relation.schema)
      | selectattr('alias', 'equalto', relation.identifier) | list -%}
  {%- if not owners -%}
    {%- set owners = nodes | selectattr('name', 'equalto', relation.identifier) | list -%}
  {%- endif -%}
  {{ return({'relation': relation, 'node': owners[0] if owners else none}) }}
{% endmacro %}


{#- The key columns: the argument, else a's (then b's) model unique_key, else its contract's
    primary key, else the columns of its one unique test; validated names. -#}
{% macro _diff_key(key, side_a, side_b) %}
  {#- A `set` inside a loop does not outlive it in Jinja: the found key goes into lists. -#}
  {%- set names = delta_ops._as_list(key, 'diff_relations argument key') -%}
  {%- set source = ['argument key'] -%}
  {%- for node in [side_a.node, side_b.node] if node is not none and not names -%}
    {%- set unique_key = node.config.get('unique_key') -%}
    {%- if unique_key -%}
      {%- do names.extend(delta_ops._as_list(unique_key, node.name ~ "'s unique_key")) -%}
      {%- do source.append(node.name ~ "'s unique_key") -%}
    {%- else -%}
      {%- for constraint in node.get('constraints', []) if constraint.type == 'primary_key' -%}
        {%- do names.extend(constraint.columns or []) -%}
      {%- endfor -%}
      {%- for column in node.get('columns', {}).values() -%}
        {%- for constraint in column.get('constraints', []) if constraint.type == 'primary_key' -%}
          {%- do names.append(column.name) -%}
        {%- endfor -%}
      {%- endfor -%}
      {%- do source.append(node.name ~ "'s primary_key constraint") -%}
    {%- endif -%}
    {%- if not names -%}
      {%- set tested = delta_ops._diff_unique_tests(node) -%}
      {%- if tested | length > 1 -%}
        {{ exceptions.raise_compiler_error("diff_relations: " ~ node.name ~ " has several unique "
            ~ "tests (" ~ tested | map('join', ', ') | join('; ') ~ "): give key, e.g. --args "
            ~ "'{..., key: [" ~ tested[0] | join(', ') ~ "]}'.") }}
      {%- endif -%}
      {%- do names.extend(tested[0] if tested else []) -%}
      {%- do source.append(node.name ~ "'s unique test") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not names -%}
    {{ exceptions.raise_compiler_error("diff_relations: no key to match the rows of "
        ~ side_a.relation ~ " and " ~ side_b.relation ~ " by: give key (e.g. --args "
        ~ "'{..., key: [order_id]}'), or give the model a unique_key config, a primary_key "
        ~ "constraint in its contract, or a unique test.") }}
  {%- endif -%}
  {%- for name in names -%}
    {%- do safe_identifier(name, 'diff_relations key column (from ' ~ source[-1] ~ ')') -%}
  {%- endfor -%}
  {{ return(names | unique | list) }}
{% endmacro %}


{#- The column lists of the model's uniqueness tests: dbt's `unique` (one column) and
    dbt_utils' `unique_combination_of_columns`. -#}
{% macro _diff_unique_tests(node) %}
  {%- set found = [] -%}
  {%- for test in graph.nodes.values() if test.resource_type == 'test'
      and test.get('attached_node') == node.unique_id and test.get('test_metadata') -%}
    {%- set kwargs = test.test_metadata.kwargs -%}
    {%- if test.test_metadata.name == 'unique' and (test.column_name or kwargs.column_name) -%}
      {%- do found.append([test.column_name or kwargs.column_name]) -%}
    {%- elif test.test_metadata.name == 'unique_combination_of_columns' -%}
      {%- do found.append(kwargs.combination_of_columns | list) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{#- {column: data type} of a relation (with its time-travel clause), in order; a clear error
    when it cannot be read. -#}
{% macro _diff_columns(relation_text, argument) %}
  {%- set described = delta_ops._try_sql('describe query select * from ' ~ relation_text) -%}
  {%- if described.error -%}
    {{ exceptions.raise_compiler_error("diff_relations argument " ~ argument ~ ": cannot read "
        ~ relation_text ~ ": " ~ described.error) }}
  {%- endif -%}
  {%- set types = {} -%}
  {%- for row in described.table.rows -%}
    {%- do types.update({row['col_name']: row['data_type'] | lower}) -%}
  {%- endfor -%}
  {{ return(types) }}
{% endmacro %}


{#- Up to 5 keys that occur more than once (most often first), with how many keys do. -#}
{% macro _diff_duplicates_sql(relation_text, key) %}
  {%- set columns = [] -%}
  {%- set fields = [] -%}
  {%- for k in key -%}
    {%- do columns.append(quote_identifier(k)) -%}
    {%- do fields.append(delta_ops._diff_string(k) ~ ', ' ~ quote_identifier(k)) -%}
  {%- endfor -%}
  {{ return('select to_json(named_struct(\'key\', named_struct(' ~ fields | join(', ')
      ~ ')), map(\'ignoreNullFields\', \'false\')) as sample, n, count(*) over () as keys from ('
      ~ 'select ' ~ columns | join(', ') ~ ', count(*) as n from ' ~ relation_text ~ ' group by '
      ~ columns | join(', ') ~ ' having count(*) > 1) order by n desc, sample limit 5') }}
{% endmacro %}


{#- (k1=v1, k2=v2): a sample key for people; strings quoted, NULL as NULL. -#}
{% macro _diff_key_text(key) %}
  {%- set parts = [] -%}
  {%- for name, value in key.items() -%}
    {%- do parts.append(name ~ '=' ~ ('NULL' if value is none else (value | tojson))) -%}
  {%- endfor -%}
  {{ return('(' ~ parts | join(', ') ~ ')') }}
{% endmacro %}


{#- The one summary a reviewer reads, then the result as one JSON line for scripts. -#}
{% macro _diff_report(r) %}
  {%- set lines = [
      'diff_relations: a = ' ~ r.a ~ ', b = ' ~ r.b ~ ', key (' ~ r.key | join(', ') ~ ')'
          ~ (', tolerance ' ~ r.tolerance if r.tolerance is not none else '')
          ~ ' in ' ~ '%.1f' | format(r.seconds) ~ 's',
      '  rows in a ' ~ r.rows_a ~ ', in b ' ~ r.rows_b] -%}
  {%- for kind, label in [('only_in_a', 'only in a'), ('only_in_b', 'only in b'), ('changed', 'changed'), ('unchanged', 'unchanged')] -%}
    {%- set shown = [] -%}
    {%- for s in r.samples.get(kind, []) -%}
      {%- do shown.append(delta_ops._diff_key_text(s.key) ~ (' ' ~ s.columns | join(', ') if s.columns else '')) -%}
    {%- endfor -%}
    {%- do lines.append('  ' ~ (label ~ ':').ljust(11) ~ (r[kind] | string).rjust(10)
        ~ ('   e.g. ' ~ shown | join('; ') if shown else '')) -%}
  {%- endfor -%}
  {%- if r.columns -%}
    {%- set width = [r.columns | map('length') | max, 6] | max -%}
    {%- do lines.append('  ' ~ 'column'.ljust(width) ~ '  changed rows') -%}
    {%- for c in r.columns -%}
      {%- do lines.append('  ' ~ c.ljust(width) ~ '  ' ~ (r.column_changes[c] | string).rjust(12)
          ~ ('  (types differ: compared as text)' if c in r.compared_as_text else '')) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if r.columns_only_in_a -%}{%- do lines.append('  columns only in a: ' ~ r.columns_only_in_a | join(', ')) -%}{%- endif -%}
  {%- if r.columns_only_in_b -%}{%- do lines.append('  columns only in b: ' ~ r.columns_only_in_b | join(', ')) -%}{%- endif -%}
  {%- do lines.append('  ' ~ ('differs' if r.differs else 'identical')) -%}
  {{ log(lines | join('\n'), info=True) }}
  {{ log('diff_relations result: ' ~ tojson(r), info=True) }}
{% endmacro %}
