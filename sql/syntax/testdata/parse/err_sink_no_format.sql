CREATE SINK s OPTIONS (path 'x');
