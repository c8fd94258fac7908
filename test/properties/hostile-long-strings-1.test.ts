import { longStringsShard } from './hostile-long-strings.js';

longStringsShard(0, 3);
